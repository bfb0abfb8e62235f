# compare() returns the command line's rows (compare --json) as a data frame, and its notes.

expect_same_rows <- function(frame, cli_rows) {
  expect_equal(nrow(frame), length(cli_rows))
  # The columns in the order compare --json writes the fields.
  expect_identical(names(frame), unique(unlist(lapply(cli_rows, names))))
  for (i in seq_along(cli_rows)) {
    for (field in names(frame)) {
      value <- frame[[field]][i]
      expected <- cli_rows[[i]][[field]]
      if (field == "note" && !is.null(expected)) {
        value <- jsonlite::fromJSON(value, simplifyVector = FALSE)
      }
      expect_true(same_value(value, expected), info = sprintf("row %d, %s", i, field))
    }
  }
}

test_that("compare returns the same rows as compare --json", {
  path <- model_path("bernoulli-k100.toml")
  methods <- c("ubapp", "lbapp", "geometric", "laplace-count")
  frame <- compare(path, eps = c(0.5, 2), methods = methods)
  cli_rows <- cli_json("compare", path, "--eps", "0.5,2", "--methods", paste(methods, collapse = ","))
  expect_s3_class(frame, "data.frame")
  expect_same_rows(frame, cli_rows)
  expect_setequal(unique(frame$method), methods)
})

test_that("a party model gets the party comparison, rows and notes as on the command line", {
  path <- model_path("hospitals-5-parties.toml")
  frame <- compare(ubapp_model(path), eps = 0.5)
  cli <- cli_json("compare", path, "--eps", "0.5")
  expect_same_rows(frame, cli$rows)
  expect_identical(attr(frame, "notes"), unlist(cli$notes))
  expect_true(any(frame$parties == 5, na.rm = TRUE))
})

test_that("an unknown method is an input error naming it", {
  expect_error(
    compare(model_path("bernoulli-k100.toml"), eps = 1, methods = "no-such-method"),
    "no-such-method",
    class = "ubapp_input_error"
  )
})

test_that("compare passes the gap and the time limit, and checks them", {
  path <- model_path("vote-share-3way-small.toml")
  rows <- compare(path, eps = 1, solver = "anytime", gap = 0.05, max_seconds = 60)
  expect_equal(rows$method[[1]], "ubapp")
  expect_true(any(grepl("is certified within a gap of", attr(rows, "notes"), fixed = TRUE)))
  expect_error(compare(path, eps = 1, gap = 1.5), "gap")
  expect_error(compare(path, eps = 1, max_seconds = 0), "max_seconds")
})
