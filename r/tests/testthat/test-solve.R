# R's optimum is the command line's: the same fields, equal to the last digit, and P checked by an
# independent route (its columns, its ε-DP ratios and its Bayes risk recomputed in R).

test_that("the paper model's optimum equals the CLI's --json to the last digit", {
  for (file in c("bernoulli-k100.toml", "bernoulli-k100-paper-grid.toml")) {
    path <- model_path(file)
    cli_rows <- cli_json("solve", path)
    result <- solve(ubapp_model(path))
    expect_s3_class(result, "data.frame")
    expect_equal(nrow(result), length(cli_rows))
    for (i in seq_along(cli_rows)) {
      expect_setequal(timeless(names(result)), timeless(names(cli_rows[[i]])))
      for (field in timeless(names(cli_rows[[i]]))) {
        value <- result[[field]]
        value <- if (is.list(value)) value[[i]] else value[i]
        expect_true(same_value(value, cli_rows[[i]][[field]]), info = sprintf("%s: row %d, %s", file, i, field))
      }
      # The risk and its certified bound printed with 17 significant digits: the same text.
      expect_identical(sprintf("%.17g", result$bayes_risk[i]), sprintf("%.17g", cli_rows[[i]]$bayes_risk))
      expect_identical(sprintf("%.17g", result$dual_bound[i]), sprintf("%.17g", cli_rows[[i]]$dual_bound))
    }
  }
})

test_that("P is a column-stochastic ε-DP matrix whose Bayes risk R recomputes", {
  result <- solve(ubapp_model(model_path("bernoulli-k100.toml")), eps = 1)
  P <- attr(result, "P")
  expect_true(is.matrix(P))
  expect_equal(dim(P), c(100L, 101L))
  expect_equal(colSums(P), rep(1, 101), tolerance = 1e-7)
  # ε-DP between neighbouring observations y ~ y + 1, both ways.
  expect_true(all(P[, -1] <= exp(1) * P[, -101] + 1e-7))
  expect_true(all(P[, -101] <= exp(1) * P[, -1] + 1e-7))
  # Bayes risk (paper eq. for squared loss): Σ_j π_j Σ_i q(y_i | θ_j) Σ_k P[k, i] (θ_j − θ̃_k)².
  theta <- (seq_len(100) - 0.5) / 100
  q <- t(vapply(theta, function(t) dbinom(0:100, 100, t), numeric(101)))
  loss <- outer(theta, theta, function(a, b) (a - b)^2)
  risk <- mean(vapply(seq_along(theta), function(j) sum(q[j, ] * colSums(P * loss[j, ])), numeric(1)))
  expect_equal(risk, result$bayes_risk, tolerance = 1e-7)
})

test_that("several ε give one row each and a list of P matrices", {
  result <- solve(ubapp_model(model_path("bernoulli-k100.toml")), c(0.5, 2))
  expect_equal(result$eps, c(0.5, 2))
  expect_length(attr(result, "P"), 2L)
  expect_true(result$bayes_risk[1] > result$bayes_risk[2])
})

test_that("a model from TOML text or an R list solves like the file", {
  path <- model_path("bernoulli-k100.toml")
  from_file <- solve(ubapp_model(path), eps = 0.1)
  text <- paste(readLines(path), collapse = "\n")
  from_text <- solve(ubapp_model(text, origin = "coin.toml"), eps = 0.1)
  fields <- list(
    name = "bernoulli-k100", epsilon = list(0.1),
    parameter = list(lower = 0, upper = 1, grid = list(kind = "midpoint", points = 100), prior = list(kind = "uniform")),
    observation = list(family = "binomial", trials = 100),
    output = list(grid = "parameter"),
    loss = list(kind = "squared")
  )
  from_list <- solve(ubapp_model(fields))
  expect_identical(from_text$bayes_risk, from_file$bayes_risk)
  expect_identical(from_list$bayes_risk, from_file$bayes_risk)
})

test_that("the anytime route brackets the exact optimum and stops at the gap", {
  model <- ubapp_model(model_path("vote-share-3way-small.toml"))
  exact <- solve(model, eps = 1)
  anytime <- solve(model, eps = 1, solver = "anytime", gap = 0.05, max_seconds = 60)
  expect_true(anytime$status %in% c("certified-gap", "optimal"))
  expect_lte(anytime$relative_gap, 0.05)
  expect_lte(anytime$dual_bound, exact$bayes_risk * (1 + 1e-9))
  expect_gte(anytime$bayes_risk, exact$bayes_risk * (1 - 1e-9))
  expect_error(solve(model, eps = 1, gap = 1.5), "gap")
  expect_error(solve(model, eps = 1, max_seconds = 0), "max_seconds")
})
