#' The certified mechanism of a solution
#' @export
mechanism <- function(x, eps = NULL, solver = "auto") {
  if (inherits(x, "ubapp_model") || is.character(x)) {
    if (is.null(eps) || length(eps) != 1L) {
      .input_error("eps must be one privacy level when mechanism() solves a model")
    }
    x <- solve(.as_model(x), eps = eps, solver = solver)
  }
  if (!inherits(x, "ubapp_solution")) {
    .input_error("x must be a model, a model file or the result of solve()")
  }
  solutions <- attr(x, "solutions")
  if (is.null(solutions) || length(solutions) != nrow(x)) {
    .input_error("x must be the whole result of solve() (a subset loses its solutions): pass it with eps = the ε to certify")
  }
  row <- if (is.null(eps)) {
    if (length(solutions) != 1L) {
      .input_error(sprintf("eps must say which of the %d solved ε values to certify", length(solutions)))
    }
    1L
  } else {
    which(x$eps == eps)
  }
  if (length(row) != 1L) {
    .input_error(sprintf("eps = %s is not one of the solved ε values (%s)", format(eps), paste(x$eps, collapse = ", ")))
  }
  .mechanism(.native(.Call(wrap__native_certify, solutions[[row]])))
}

#' Wrap a native mechanism with what R shows of it.
#' @noRd
.mechanism <- function(ptr) {
  info <- .native(.Call(wrap__native_mechanism_info, ptr))
  structure(c(list(ptr = ptr), info), class = "ubapp_mechanism")
}

.check_mechanism <- function(mech) {
  if (!inherits(mech, "ubapp_mechanism")) {
    .input_error("mech must be a mechanism (mechanism() or load_mechanism())", sys.call(-1L))
  }
}

#' Write a mechanism file
#' @export
save_mechanism <- function(mech, path) {
  .check_mechanism(mech)
  invisible(.native(.Call(wrap__native_mechanism_save, mech$ptr, path.expand(path))))
}

#' Read and re-verify a mechanism file
#' @export
load_mechanism <- function(path, model = NULL, fingerprint = NULL, max_eps = NULL) {
  if (inherits(model, "ubapp_model")) {
    if (is.null(model$path)) {
      .input_error("model must be a model file here (for a model from text or a list, check with verify(mech, model))")
    }
    model <- model$path
  }
  model <- if (is.null(model)) NULL else path.expand(model)
  .mechanism(.native(.Call(
    wrap__native_mechanism_load, path.expand(path), model, fingerprint, .numbers(max_eps, "max_eps")
  )))
}

#' Check a mechanism against what you trust
#' @export
verify <- function(mech, model = NULL, fingerprint = NULL) {
  .check_mechanism(mech)
  trusted <- if (is.null(model)) NULL else .as_model(model)$ptr
  .json(.native(.Call(wrap__native_verify, mech$ptr, trusted, fingerprint)))
}

#' Random samples and releases
#'
#' `sample()` is base R's for vectors; for a mechanism it releases values with its exact sampler.
#' @export
sample <- function(x, ...) UseMethod("sample")

#' @export
sample.default <- function(x, size, replace = FALSE, prob = NULL, ...) {
  base::sample(x, size, replace, prob)
}

#' @export
sample.ubapp_mechanism <- function(x, y, n = 1, budget = NULL, seed = NULL, allow_composition = FALSE, ...) {
  .warn_if_unchecked(x)
  draws <- .native(.Call(
    wrap__native_sample, x$ptr, .numbers(y, "y"), .numbers(n, "n"), .numbers(seed, "seed"),
    .numbers(budget, "budget"), allow_composition
  ))
  dim <- as.integer(x$output_dim)
  if (dim == 1L) draws else matrix(draws, ncol = dim, byrow = TRUE)
}

#' A release from records, recorded in the privacy-budget ledger
#' @export
release <- function(mech, data, ledger, dataset, seed = NULL) {
  .check_mechanism(mech)
  .warn_if_unchecked(mech)
  # A data frame is a list of columns; a vector is one column.
  cols <- if (is.list(data)) as.list(data) else list(data = data)
  if (length(cols) == 0L || is.null(names(cols)) || any(names(cols) == "")) {
    .input_error("data must be a vector, or a data frame (or named list) of columns of records")
  }
  columns <- lapply(names(cols), function(n) {
    x <- cols[[n]]
    if (!is.numeric(x) && !is.logical(x)) {
      .input_error(sprintf("data column \"%s\" must be numbers or TRUE/FALSE (got %s)", n, class(x)[1L]), NULL)
    }
    as.double(x)
  })
  names(columns) <- names(cols)
  .json(.native(.Call(
    wrap__native_release, mech$ptr, columns, path.expand(ledger), dataset, .numbers(seed, "seed")
  )))
}

#' The exact posterior given releases
#' @export
posterior <- function(mech, releases, level = 0.95) {
  .check_mechanism(mech)
  .warn_if_unchecked(mech)
  dim <- as.integer(mech$output_dim)
  items <- if (is.list(releases)) {
    lapply(releases, function(r) .numbers(r, "releases"))
  } else if (is.matrix(releases)) {
    lapply(seq_len(nrow(releases)), function(i) .numbers(releases[i, ], "releases"))
  } else if (dim == 1L) {
    as.list(.numbers(releases, "releases"))
  } else {
    list(.numbers(releases, "releases"))
  }
  p <- .json(.native(.Call(wrap__native_posterior, mech$ptr, items, .numbers(level, "level"))))
  for (note in unlist(p$notes)) warning(note, call. = FALSE)
  theta <- do.call(rbind, lapply(p$theta, unlist))
  interval <- do.call(rbind, lapply(p$interval, unlist))
  colnames(interval) <- c("lower", "upper")
  one_d <- ncol(theta) == 1L
  structure(
    list(
      theta = if (one_d) theta[, 1L] else theta,
      probabilities = unlist(p$probabilities),
      posterior_mean = unlist(p$posterior_mean),
      level = p$level,
      posterior_median = unlist(p$posterior_median),
      posterior_mode = unlist(p$posterior_mode),
      bayes_estimate = unlist(p$bayes_estimate$value),
      bayes_rule = p$bayes_estimate$rule,
      loss = p$bayes_estimate$loss,
      interval = if (one_d) interval[1L, ] else interval,
      interval_mass = unlist(p$interval_mass),
      box_mass = p$box_mass,
      region = unlist(p$region$points) + 1L,
      region_mass = p$region$mass
    ),
    class = "ubapp_posterior"
  )
}

.warn_if_unchecked <- function(mech) {
  if (!isTRUE(mech$trusted)) {
    warning(
      "this mechanism file was checked against the model embedded in it only: it proves the ",
      "weights are private for that model, not that it is the model you deploy (pass model= or ",
      "fingerprint= with max_eps= to load_mechanism())",
      call. = FALSE
    )
  }
}

#' @export
print.ubapp_mechanism <- function(x, ...) {
  cat(sprintf(
    "<ubapp mechanism (%s) for model \"%s\": target ε = %s, certified ε = %s, Bayes risk %s%s>\n",
    x$kind, x$model_name, format(x$eps), format(x$certified_eps), format(x$bayes_risk),
    if (isTRUE(x$trusted)) "" else "; checked against its embedded model only"
  ))
  invisible(x)
}

#' @export
print.ubapp_posterior <- function(x, ...) {
  cat(sprintf("<ubapp posterior: mean %s, %s%% interval %s>\n",
    paste(format(x$posterior_mean), collapse = ", "), format(100 * x$level),
    paste(format(x$interval), collapse = " to ")))
  invisible(x)
}
