#' A validated model
#'
#' Reads a model file (TOML, as `ubapp solve` reads it), parses TOML text, or takes the file's
#' fields as a named R list.
#' @export
ubapp_model <- function(x, origin = NULL) {
  if (is.list(x)) {
    origin <- if (is.null(origin)) "<list>" else origin
    text <- as.character(jsonlite::toJSON(x, auto_unbox = TRUE, digits = I(17), null = "null", na = "null"))
    ptr <- .native(.Call(wrap__native_model_from_json, text, origin))
  } else if (is.character(x) && length(x) == 1L && !is.na(x)) {
    ptr <- if (is.null(origin)) {
      .native(.Call(wrap__native_model_load, path.expand(x)))
    } else {
      .native(.Call(wrap__native_model_from_toml, x, origin))
    }
  } else {
    .input_error("x must be a model file's path, TOML text (with origin) or a named list of the model's fields")
  }
  info <- .native(.Call(wrap__native_model_info, ptr))
  structure(
    list(
      ptr = ptr,
      path = if (is.character(x) && is.null(origin)) x else NULL,
      name = info$name,
      parties = info$parties,
      epsilons = info$epsilons,
      source = info$source
    ),
    class = "ubapp_model"
  )
}

#' The model's fields (as its file states them, CSV contents inline).
#' @noRd
.model_spec <- function(model) {
  .json(.native(.Call(wrap__native_model_info, model$ptr))$spec)
}

#' A model from a model object or a file's path.
#' @noRd
.as_model <- function(model) {
  if (inherits(model, "ubapp_model")) model else ubapp_model(model)
}

#' @export
print.ubapp_model <- function(x, ...) {
  cat(sprintf(
    "<ubapp model \"%s\" from %s: %d ε value(s), %d part%s>\n",
    x$name, x$source, length(x$epsilons), as.integer(x$parties), if (x$parties == 1) "y" else "ies"
  ))
  invisible(x)
}
