# Releases from records in R: the same statistic, draw and ledger entry as `ubapp release`.

patients_model <- function(dir) {
  path <- file.path(dir, "patients.toml")
  writeLines(c(
    'name = "patients"', "epsilon = [0.5]", "[parameter]",
    'grid = { kind = "midpoint", points = 25 }', 'prior = { kind = "uniform" }',
    "[observation]", 'family = "binomial"', "trials = 250", "[loss]", 'kind = "squared"'
  ), path)
  path
}

# The same fixed records as tests/release_data.rs and the Python test.
cured_records <- function(n = 250) {
  i <- seq_len(n) - 1
  as.numeric((i * 7919 + 13) %% 10 < 3)
}

deployment <- function(dir) {
  model <- patients_model(dir)
  mech <- file.path(dir, "mech.json")
  r <- cli("solve", model, "--out", mech, "--quiet")
  if (r$status != 0) stop(r$stderr)
  ledger <- file.path(dir, "ledger.db")
  r <- cli("ledger", "init", "--ledger", ledger, "--dataset", "hospital-2026", "--budget", 5)
  if (r$status != 0) stop(r$stderr)
  list(model = model, mech = mech, ledger = ledger)
}

test_that("a vector and a data.frame column release what the CLI releases from the CSV", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  d <- deployment(dir)
  cured <- cured_records()
  csv <- file.path(dir, "patients.csv")
  write.csv(data.frame(id = seq_along(cured) - 1, cured = cured), csv, row.names = FALSE)
  mech <- load_mechanism(d$mech, model = d$model)
  entry <- release(mech, cured, ledger = d$ledger, dataset = "hospital-2026", seed = 3)
  r <- cli(
    "release", d$mech, "--data", csv, "--column", "cured", "--ledger", d$ledger,
    "--dataset", "hospital-2026", "--seed", 3, "--model", d$model
  )
  expect_equal(r$status, 0)
  expect_identical(entry$value, r$stdout)
  sampled <- cli("sample", d$mech, "--y", sum(cured), "--seed", 3, "--model", d$model)
  expect_identical(entry$value, sampled$stdout)
  expect_identical(entry$composition, "basic-pure-eps")
  frame <- data.frame(cured = cured == 1)
  expect_identical(release(mech, frame["cured"], ledger = d$ledger, dataset = "hospital-2026", seed = 3)$value, entry$value)
  expect_identical(release(mech, frame$cured, ledger = d$ledger, dataset = "hospital-2026", seed = 3)$value, entry$value)
})

test_that("bad records raise one sentence naming the element and spend nothing", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  d <- deployment(dir)
  mech <- load_mechanism(d$mech, model = d$model)
  bad <- cured_records()
  bad[6] <- 7
  expect_error(
    release(mech, bad, ledger = d$ledger, dataset = "hospital-2026"),
    "data, element 6, column \"data\": 7 is outside the model's domain", class = "ubapp_input_error", fixed = TRUE
  )
  expect_error(
    release(mech, cured_records(249), ledger = d$ledger, dataset = "hospital-2026"),
    "has 249 records", class = "ubapp_input_error"
  )
  na <- cured_records()
  na[3] <- NA
  expect_error(release(mech, na, ledger = d$ledger, dataset = "hospital-2026"), "element 3", class = "ubapp_input_error")
  expect_error(release(mech, c("a", "b"), ledger = d$ledger, dataset = "hospital-2026"), "must be numbers", class = "ubapp_input_error")
  shown <- cli_json("ledger", "show", "--ledger", d$ledger)
  expect_length(shown[[1]]$releases, 0L)
})
