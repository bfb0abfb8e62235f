#' Solve a model for each privacy level
#'
#' A method of base R's `solve()` generic for models: `solve(model, eps)`.
#' @export
solve.ubapp_model <- function(a, b = NULL, ..., eps = b, solver = "auto", gap = NULL, max_seconds = NULL) {
  model <- a
  eps <- .numbers(eps, "eps")
  gap <- .numbers(gap, "gap")
  max_seconds <- .numbers(max_seconds, "max_seconds")
  answer <- .native(.Call(wrap__native_solve, model$ptr, eps, solver, gap, max_seconds))
  rows <- lapply(answer, function(s) .json(s$row))
  frame <- .rows_frame(rows)
  ps <- lapply(answer, function(s) {
    if (s$p_rows == 0) NULL else matrix(s$p, nrow = s$p_rows, ncol = s$p_cols)
  })
  attr(frame, "P") <- if (length(ps) == 1L) ps[[1L]] else ps
  attr(frame, "solutions") <- lapply(answer, function(s) s$solution)
  attr(frame, "model") <- model
  class(frame) <- c("ubapp_solution", class(frame))
  frame
}
