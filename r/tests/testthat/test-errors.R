# Bad input is an R condition of class ubapp_input_error carrying the command line's sentence.

bad_model <- function() {
  file <- tempfile(fileext = ".toml")
  writeLines(c(
    'name = "bad"', "epsilon = [1.0]", "[parameter]", 'grid = { kind = "midpoint", points = 10 }',
    'prior = { kind = "uniform" }', "[observation]", 'family = "binomial"', "trials = 20.5",
    "[loss]", 'kind = "squared"'
  ), file)
  file
}

test_that("a malformed model raises ubapp_input_error naming the file and the field", {
  file <- bad_model()
  on.exit(unlink(file))
  err <- tryCatch(ubapp_model(file), error = function(e) e)
  expect_s3_class(err, "ubapp_input_error")
  expect_s3_class(err, "ubapp_error")
  expect_match(conditionMessage(err), "observation.trials", fixed = TRUE)
  expect_match(conditionMessage(err), file, fixed = TRUE)
  # The command line's sentence, word for word (it exits 2).
  run <- cli("solve", file)
  expect_equal(run$status, 2L)
  expect_identical(paste0("error: ", conditionMessage(err)), run$stderr)
})

test_that("a malformed model given as a list names the field", {
  fields <- list(
    name = "bad", epsilon = list(1),
    parameter = list(grid = list(kind = "midpoint", points = 10), prior = list(kind = "uniform")),
    observation = list(family = "binomial", trials = -3), loss = list(kind = "squared")
  )
  err <- tryCatch(ubapp_model(fields), error = function(e) e)
  expect_s3_class(err, "ubapp_input_error")
  expect_match(conditionMessage(err), "^<list>: observation\\.trials: ")
  # No line number: the caller wrote no file.
  expect_false(grepl("line", conditionMessage(err)))
  expect_error(ubapp_model(42), class = "ubapp_input_error")
})

test_that("out-of-range and wrongly typed arguments are input errors naming the argument", {
  model <- ubapp_model(model_path("bernoulli-k100.toml"))
  expect_error(solve(model, eps = -1), "eps", class = "ubapp_input_error")
  expect_error(solve(model, eps = "one"), "eps", class = "ubapp_input_error")
  expect_error(solve(model, eps = NA), "eps", class = "ubapp_input_error")
  expect_error(solve(model, eps = 1, solver = "nope"), "solver", class = "ubapp_input_error")
  expect_error(ubapp_model(file.path(tempdir(), "no-such-model.toml")), "no-such-model", class = "ubapp_input_error")
  expect_error(load_mechanism(file.path(tempdir(), "no-such-file.json")), class = "ubapp_input_error")
})

test_that("mechanism() says which ε to certify, and needs solve()'s whole result", {
  result <- solve(ubapp_model(model_path("bernoulli-k100.toml")), eps = c(0.5, 1))
  expect_error(mechanism(result), "which of the 2", class = "ubapp_input_error")
  expect_error(mechanism(result, eps = 3), "not one of the solved", class = "ubapp_input_error")
  expect_error(mechanism(result[2, ]), "whole result", class = "ubapp_input_error")
  expect_equal(mechanism(result, eps = 1)$eps, 1)
})

test_that("a malformed UBAPP_MEMORY_LIMIT is an input error naming it, as the command line says", {
  file <- model_path("bernoulli-k100.toml")
  model <- ubapp_model(file)
  old <- Sys.getenv("UBAPP_MEMORY_LIMIT", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("UBAPP_MEMORY_LIMIT") else Sys.setenv(UBAPP_MEMORY_LIMIT = old))
  Sys.setenv(UBAPP_MEMORY_LIMIT = "lots")
  err <- tryCatch(ubapp_model(file), error = function(e) e)
  expect_s3_class(err, "ubapp_input_error")
  expect_match(conditionMessage(err), "UBAPP_MEMORY_LIMIT", fixed = TRUE)
  # The command line's sentence, word for word (it exits 2).
  run <- cli("solve", file)
  expect_equal(run$status, 2L)
  expect_identical(paste0("error: ", conditionMessage(err)), run$stderr)
  expect_error(solve(model, eps = 1), "UBAPP_MEMORY_LIMIT", class = "ubapp_input_error")
  Sys.setenv(UBAPP_MEMORY_LIMIT = format(2^34, scientific = FALSE))
  expect_equal(nrow(solve(model, eps = 1)), 1L)
})
