# The bridge to the native code (src/rust): every call's answer passes through .native(), which
# turns a failure into an R condition carrying the command line's message.

#' Raise a native failure as an R condition.
#'
#' The glue returns failures instead of throwing them: a character scalar of class
#' `ubapp_failure` with the attribute `input` (the command line's exit code 2). It becomes a
#' condition of class `ubapp_input_error` (bad input the caller can fix) or `ubapp_error`, both
#' inheriting `error`.
#' @noRd
.native <- function(value, call = sys.call(-1L)) {
  if (inherits(value, "ubapp_failure")) {
    input <- isTRUE(attr(value, "input"))
    message <- as.character(unclass(value))[1L]
    class <- c(if (input) "ubapp_input_error", "ubapp_error", "error", "condition")
    stop(structure(class = class, list(message = message, call = call)))
  }
  value
}

#' An input error raised from the R side (same class as the native ones).
#' @noRd
.input_error <- function(message, call = sys.call(-1L)) {
  stop(structure(
    class = c("ubapp_input_error", "ubapp_error", "error", "condition"),
    list(message = message, call = call)
  ))
}

#' Parse the JSON text the native code returns (objects stay lists, arrays of numbers vectors).
#' @noRd
.json <- function(text) {
  jsonlite::fromJSON(text, simplifyVector = FALSE)
}

#' Rows (a list of named lists, as `--json` prints them) as a data frame: one column per field in
#' order of first appearance; a field whose values are all scalars (or null, which becomes NA)
#' is an atomic column, any other a list column.
#' @noRd
.rows_frame <- function(rows) {
  fields <- unique(unlist(lapply(rows, names), use.names = FALSE))
  columns <- lapply(fields, function(f) {
    values <- lapply(rows, function(r) r[[f]])
    scalar <- vapply(values, function(v) is.null(v) || (is.atomic(v) && length(v) == 1L), logical(1))
    if (all(scalar)) {
      present <- values[!vapply(values, is.null, logical(1))]
      if (length(present) == 0L) {
        return(rep(NA, length(values)))
      }
      na <- switch(class(present[[1L]])[1L], character = NA_character_, logical = NA, integer = NA_integer_, NA_real_)
      return(unlist(lapply(values, function(v) if (is.null(v)) na else v), use.names = FALSE))
    }
    I(values)
  })
  names(columns) <- fields
  frame <- as.data.frame(columns, stringsAsFactors = FALSE, optional = TRUE)
  # as.data.frame keeps list columns as AsIs; plain lists read better.
  for (f in fields) {
    if (inherits(frame[[f]], "AsIs")) frame[[f]] <- unclass(frame[[f]])
  }
  frame
}

#' Numbers for the native side: NULL stays NULL, anything else becomes a double vector.
#' @noRd
.numbers <- function(x, name) {
  if (is.null(x)) {
    return(NULL)
  }
  if (!is.numeric(x) && !is.logical(x)) {
    .input_error(sprintf("%s must be numbers (got %s)", name, class(x)[1L]))
  }
  as.double(x)
}

#' The version of the ubapp crate the package was built from.
#' @export
ubapp_version <- function() {
  .Call(wrap__native_version)
}
