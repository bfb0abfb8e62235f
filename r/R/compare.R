#' Compare UBaPP with the estimators of the literature
#' @export
compare <- function(model, eps = NULL, methods = NULL, trials = NULL, seed = 0, delta = 1e-5,
                    parties = NULL, solver = "auto", out = NULL, max_seconds = NULL, gap = NULL) {
  model <- .as_model(model)
  text <- .native(.Call(
    wrap__native_compare, model$ptr, .numbers(eps, "eps"), .numbers(trials, "trials"),
    if (is.null(methods)) NULL else as.character(methods), .numbers(seed, "seed"),
    .numbers(delta, "delta"), .numbers(parties, "parties"), solver,
    if (is.null(out)) NULL else path.expand(out), .numbers(max_seconds, "max_seconds"),
    .numbers(gap, "gap")
  ))
  answer <- .json(text)
  frame <- .rows_frame(answer$rows)
  if ("note" %in% names(frame)) {
    # The per-row note (how a risk was obtained) as the command line writes it, JSON text: one
    # atomic column, as data frames and ggplot2 like them.
    frame$note <- vapply(answer$row_notes, function(n) if (is.null(n)) NA_character_ else n, character(1))
  }
  attr(frame, "notes") <- unlist(answer$notes)
  frame
}
