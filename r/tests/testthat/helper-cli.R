# The repository's models and the `ubapp` command line the package is checked against.

repo_root <- function() {
  root <- Sys.getenv("UBAPP_ROOT")
  if (nzchar(root)) root else normalizePath(file.path(testthat::test_path(), "..", "..", ".."))
}

model_path <- function(name) file.path(repo_root(), "models", name)

cli_bin <- function() {
  bin <- Sys.getenv("UBAPP_BIN")
  if (!nzchar(bin)) bin <- file.path(repo_root(), "target", "release", "ubapp")
  if (!file.exists(bin)) {
    stop("the ubapp command line is needed to cross-check the package: build it (cargo build --release) or set UBAPP_BIN (looked for ", bin, ")")
  }
  bin
}

# Run the command line: its exit status, stdout and stderr.
cli <- function(...) {
  out <- tempfile()
  err <- tempfile()
  on.exit(unlink(c(out, err)))
  status <- system2(cli_bin(), shQuote(as.character(c(...))), stdout = out, stderr = err)
  list(
    status = status,
    stdout = paste(readLines(out, warn = FALSE), collapse = "\n"),
    stderr = paste(readLines(err, warn = FALSE), collapse = "\n")
  )
}

# Run the command line with --json and parse its answer (an error on a non-zero exit).
cli_json <- function(...) {
  r <- cli(..., "--json")
  if (r$status != 0) stop("ubapp ", paste(c(...), collapse = " "), " failed: ", r$stderr)
  jsonlite::fromJSON(r$stdout, simplifyVector = FALSE)
}

# Every field but wall-clock times (`seconds`, `assembly_seconds`, and the command line's phase
# breakdown `phases` with its `threads`), which differ between runs.
timeless <- function(fields) fields[!grepl("seconds$", fields) & !(fields %in% c("phases", "threads"))]

# A data frame row's field as the command line's JSON writes it (NA for null, a list column's value as is).
same_value <- function(frame_value, json_value) {
  if (is.null(json_value)) {
    return(length(frame_value) == 1L && is.na(frame_value))
  }
  identical(frame_value, json_value)
}
