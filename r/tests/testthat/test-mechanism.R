# Certified mechanisms from R: files the command line verifies, and its sampler's draws.

coin <- function() mechanism(solve(ubapp_model(model_path("bernoulli-k100.toml")), eps = 1))

test_that("a mechanism saved from R verifies with `ubapp verify --model`", {
  mech <- coin()
  file <- tempfile(fileext = ".json")
  on.exit(unlink(file))
  save_mechanism(mech, file)
  report <- cli_json("verify", file, "--model", model_path("bernoulli-k100.toml"))
  expect_true(report$ok)
  expect_identical(report$certified_eps, mech$certified_eps)
  expect_identical(report$bayes_risk, mech$bayes_risk)
  expect_lte(mech$certified_eps, 1)
  # The same check from R, and the same refusal of a model that is not the one solved.
  loaded <- load_mechanism(file, model = model_path("bernoulli-k100.toml"))
  expect_true(loaded$trusted)
  mine <- verify(loaded, model = model_path("bernoulli-k100.toml"))
  report$file <- NULL
  expect_identical(mine[sort(names(mine))], c(report, list(checked_against = mine$checked_against))[sort(names(mine))])
  other <- model_path("bernoulli-k100-fine-output.toml")
  expect_equal(cli("verify", file, "--model", other)$status, 2L)
  expect_error(verify(loaded, model = other), class = "ubapp_input_error")
})

test_that("a forged mechanism file is refused as the CLI refuses it", {
  mech <- coin()
  file <- tempfile(fileext = ".json")
  on.exit(unlink(file))
  save_mechanism(mech, file)
  text <- readLines(file, warn = FALSE)
  # Claim a smaller ε than the weights give.
  writeLines(sub('"eps": *1(\\.0)?,', '"eps": 0.5,', text), file)
  expect_false(identical(readLines(file, warn = FALSE), text))
  cli_run <- cli("verify", file)
  expect_equal(cli_run$status, 2L)
  expect_error(load_mechanism(file), class = "ubapp_input_error")
})

test_that("sample with a seed draws what the CLI and the Python package draw", {
  mech <- coin()
  file <- tempfile(fileext = ".json")
  on.exit(unlink(file))
  save_mechanism(mech, file)
  mine <- sample(mech, 37, n = 50, seed = 11, allow_composition = TRUE)
  expect_type(mine, "double")
  expect_length(mine, 50L)
  cli_draws <- unlist(cli_json("sample", file, "--y", 37, "--n", 50, "--seed", 11, "--allow-composition"))
  expect_identical(mine, cli_draws)
  reloaded <- load_mechanism(file, model = model_path("bernoulli-k100.toml"))
  expect_identical(sample(reloaded, 37, n = 50, seed = 11, allow_composition = TRUE), mine)
  # A different seed gives different draws (50 draws over 100 outputs).
  expect_false(identical(sample(mech, 37, n = 50, seed = 12, allow_composition = TRUE), mine))

  python <- Sys.getenv("UBAPP_PYTHON")
  skip_if(!nzchar(python), "UBAPP_PYTHON (a Python with the ubapp package) is not set; make r-test sets it after make python-test")
  code <- sprintf(
    "import json, ubapp; m = ubapp.Mechanism.load(%s); print(json.dumps(m.sample(37, n=50, seed=11, allow_composition=True).tolist()))",
    encodeString(normalizePath(file), quote = "'")
  )
  out <- system2(python, c("-W", "ignore", "-c", shQuote(code)), stdout = TRUE)
  expect_identical(unlist(jsonlite::fromJSON(out, simplifyVector = FALSE)), mine)
})

test_that("several releases need a budget, and y must be an observation", {
  mech <- coin()
  expect_error(sample(mech, 37, n = 5), "basic composition", class = "ubapp_input_error")
  expect_length(sample(mech, 37, n = 5, budget = 5, seed = 1), 5L)
  expect_error(sample(mech, 37, n = 5, budget = 2, seed = 1), "budget = 2 is exceeded: 5 releases spend", class = "ubapp_input_error")
  expect_error(sample(mech, 101.5), "not an observation", class = "ubapp_input_error")
  expect_error(sample(mech, 37, seed = -1), "seed", class = "ubapp_input_error")
  # base R's sample() still samples vectors.
  set.seed(1)
  expect_length(sample(1:10, 3), 3L)
})

test_that("posterior equals the CLI's", {
  mech <- coin()
  file <- tempfile(fileext = ".json")
  on.exit(unlink(file))
  save_mechanism(mech, file)
  released <- sample(mech, 80, n = 3, seed = 5, allow_composition = TRUE)
  post <- posterior(mech, released, level = 0.9)
  args <- c("posterior", file, as.vector(rbind("--release", format(released, digits = 17))), "--level", "0.9")
  cli_post <- cli_json(args)
  expect_identical(post$posterior_mean, unlist(cli_post$posterior_mean))
  expect_identical(post$probabilities, unlist(cli_post$probabilities))
  expect_identical(unname(post$interval), unlist(cli_post$interval))
  expect_equal(sum(post$probabilities), 1, tolerance = 1e-12)
  expect_gte(post$interval_mass, 0.9)
  expect_error(posterior(mech, 2.5), "not an output", class = "ubapp_input_error")
})

test_that("a vector-valued mechanism samples one row per release, as the CLI draws them", {
  mech <- mechanism(ubapp_model(model_path("vote-share-3way-small.toml")), eps = 2)
  file <- tempfile(fileext = ".json")
  on.exit(unlink(file))
  save_mechanism(mech, file)
  mine <- sample(mech, c(1, 2, 5), n = 4, seed = 3, allow_composition = TRUE)
  expect_equal(dim(mine), c(4L, 3L))
  cli_draws <- cli_json("sample", file, "--y", "1,2,5", "--n", 4, "--seed", 3, "--allow-composition")
  expect_identical(mine, do.call(rbind, lapply(cli_draws, unlist)))
  # Each release is a point of the simplex.
  expect_equal(rowSums(mine), rep(1, 4), tolerance = 1e-12)
  post <- posterior(mech, mine[1:2, ])
  expect_equal(dim(post$interval), c(3L, 2L))
  expect_equal(sum(post$probabilities), 1, tolerance = 1e-12)
  # Marginal intervals, each marginal mass, and the joint region with its mass, as the CLI's JSON.
  post <- posterior(mech, list(c(0.6, 0.2, 0.2)), level = 0.9)
  cli_post <- cli_json("posterior", file, "--release", "0.6,0.2,0.2", "--level", "0.9")
  expect_identical(post$interval_mass, unlist(cli_post$interval_mass))
  expect_identical(post$box_mass, cli_post$box_mass)
  expect_identical(post$region, unlist(cli_post$region$points) + 1L)
  expect_gte(post$region_mass, 0.9)
  expect_equal(sum(post$probabilities[post$region]), post$region_mass, tolerance = 1e-12)
  expect_identical(post$bayes_rule, "posterior mean")
})

test_that("a rounded release warns with the CLI's note and a half-way one is refused", {
  mech <- coin()
  expect_warning(posterior(mech, 0.3751), "release 0.3751 taken as the output 0.375", fixed = TRUE)
  expect_error(posterior(mech, 0.37), "lies half-way between the outputs 0.365 and 0.375", class = "ubapp_input_error")
})
