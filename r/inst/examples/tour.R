# A tour of the ubapp R package: a model, its optimal private estimators, a certified mechanism,
# releases, a posterior and the comparison with the literature's estimators.
#
# Run from a clone of the repository (the paths name its models/):
#   Rscript r/inst/examples/tour.R
# with the package installed (`make r-test` installs it into target/r-lib:
#   R_LIBS=target/r-lib Rscript r/inst/examples/tour.R).

library(ubapp)

# The UBaPP paper's worked example: a coin's bias from K = 100 tosses, uniform prior, squared loss.
model <- ubapp_model("models/bernoulli-k100.toml")
print(model)

# One LP per ε: the columns of `ubapp solve --json`.
result <- solve(model, eps = c(0.1, 0.5, 1, 2))
print(result[, c("eps", "bayes_risk", "dual_bound", "relative_gap", "rmse", "status")])

# The optimal mechanism at ε = 1: P[k, i] = Pr(release θ̃_k | y = i − 1).
P <- attr(solve(model, eps = 1), "P")
cat(sprintf("P is %d outputs x %d observations; its columns sum to 1 (max error %.1e)\n",
            nrow(P), ncol(P), max(abs(colSums(P) - 1))))

# Certify it: integer weights, ε derived exactly from them; save it for `ubapp verify`.
mech <- mechanism(result, eps = 1)
print(mech)
file <- file.path(tempdir(), "coin.json")
save_mechanism(mech, file)

# Load it back as a deployer does: re-verified, and checked against the model you trust.
mech <- load_mechanism(file, model = "models/bernoulli-k100.toml")
str(verify(mech, model = "models/bernoulli-k100.toml")[c("ok", "certified_eps", "checked_against")])

# Releases for 37 heads. Ten releases from the same data spend 10·ε: say so with a budget.
# (A seed is for reproducible examples only; a real release draws from the operating system.)
released <- sample(mech, 37, n = 10, budget = 10, seed = 7)
print(released)

# What an analyst can infer from the released values: the exact posterior of θ.
print(posterior(mech, released, level = 0.9))

# Errors are conditions: ubapp_input_error for bad input (with the command line's sentence).
tryCatch(
  sample(mech, 37, n = 10),
  ubapp_input_error = function(e) cat("refused:", conditionMessage(e), "\n")
)

# UBaPP beside the literature's estimators: a tidy data frame, ready for ggplot2.
rows <- compare(model, eps = c(0.5, 1, 2), methods = c("ubapp", "lbapp", "geometric", "laplace-count"))
print(rows[, c("method", "eps", "bayes_risk", "true_risk")])
if (requireNamespace("ggplot2", quietly = TRUE)) {
  plot <- ggplot2::ggplot(rows, ggplot2::aes(eps, bayes_risk, colour = method)) +
    ggplot2::geom_line() + ggplot2::scale_x_log10() + ggplot2::scale_y_log10()
  print(plot)
}
