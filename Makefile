# Two commands on a fresh machine: `make demo` and `make test`; `make python-test` for the Python
# package, `make r-test` for the R package.
CARGO ?= cargo
MODEL ?= models/bernoulli-k100.toml

.PHONY: deps build demo test lint bench bench-peers clean paper python-deps python-test r-deps r-test

# HiGHS is built from source by the highs-sys crate: it needs cmake and libclang.
deps:
	@need=""; \
	command -v cmake >/dev/null 2>&1 || need="cmake"; \
	if command -v dpkg >/dev/null 2>&1; then dpkg -s libclang-dev >/dev/null 2>&1 || need="$$need libclang-dev"; fi; \
	if [ -n "$$need" ]; then \
		echo "installing $${need# } (needed to build HiGHS)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need >/dev/null; \
	fi

build: deps
	$(CARGO) build --release

demo: build
	./target/release/ubapp solve $(MODEL)

test: deps
	$(CARGO) test --release

# What CI holds the code to besides the tests: formatting, clippy with warnings denied, rustdoc
# with warnings denied, and a Clarabel-only build that needs no C++ toolchain.
lint: deps
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --release --no-deps
	$(CARGO) clippy --release --no-default-features --features clarabel -- -D warnings

# Timing table (docs/benchmarks.md): LP path and chain solver from (100, 100) to (10^6, 10^3); criterion benches.
bench: build
	./target/release/ubapp bench
	$(CARGO) bench --bench chain

# The Python package (pyproject.toml, python/): a fresh virtual environment under target/, maturin,
# numpy and pytest from PyPI, `pip install .` (builds the extension module with the `python`
# feature), then python/tests against the release CLI; clippy on the binding code first.
PYTHON ?= python3
VENV ?= target/python-venv

python-deps:
	@need=""; \
	$(PYTHON) -c 'import venv, ensurepip' >/dev/null 2>&1 || need="python3-venv"; \
	if command -v dpkg >/dev/null 2>&1; then dpkg -s python3-dev >/dev/null 2>&1 || need="$$need python3-dev"; fi; \
	if [ -n "$$need" ]; then \
		echo "installing $${need# } (needed for the Python package)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need >/dev/null; \
	fi

python-test: deps python-deps
	$(CARGO) build --release
	$(CARGO) clippy --release --features python -- -D warnings
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q maturin numpy pytest
	$(VENV)/bin/python -m pip install -q .
	cd python/tests && UBAPP_BIN=$(CURDIR)/target/release/ubapp $(CURDIR)/$(VENV)/bin/python -m pytest -q

# The R package (r/): R, testthat and jsonlite from the distribution's packages (apt), clippy on
# the glue crate (with the R_HOME and R_INCLUDE_DIR R CMD INSTALL sets: extendr is built once),
# `R CMD INSTALL r` into a library under target/ (the glue crate builds into
# target/ beside the command line, reusing its HiGHS), then r/tests/testthat against the release
# CLI, and against the Python package's draws when `make python-test` has built its venv.
R_LIB ?= target/r-lib

r-deps:
	@need=""; \
	if command -v dpkg >/dev/null 2>&1; then \
		for p in r-base-core r-cran-testthat r-cran-jsonlite; do dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; done; \
	else \
		command -v Rscript >/dev/null 2>&1 || need="r-base-core r-cran-testthat r-cran-jsonlite"; \
	fi; \
	if [ -n "$$need" ]; then \
		echo "installing $${need# } (needed for the R package)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need >/dev/null; \
	fi

r-test: deps r-deps
	$(CARGO) build --release
	R_HOME=$$(R RHOME) R_INCLUDE_DIR=$$(Rscript -e 'cat(R.home("include"))') $(CARGO) clippy --release -p ubapp-r -- -D warnings
	mkdir -p $(R_LIB)
	R CMD INSTALL --no-multiarch -l $(R_LIB) r
	cd r/tests/testthat && env UBAPP_ROOT=$(CURDIR) UBAPP_BIN=$(CURDIR)/target/release/ubapp \
		$$( [ -x $(CURDIR)/$(VENV)/bin/python ] && echo UBAPP_PYTHON=$(CURDIR)/$(VENV)/bin/python ) \
		R_LIBS=$(CURDIR)/$(R_LIB) Rscript -e 'testthat::test_dir(".", package = "ubapp", load_package = "installed", stop_on_failure = TRUE)'

# The same LPs for SciPy's HiGHS, HiGHS's HiPO and IPX (highspy) and CVXPY + Clarabel, side by side with `ubapp solve` (benches/peers.py).
PEER_VENV ?= target/peer-venv
bench-peers: build python-deps
	@test -x $(PEER_VENV)/bin/python || { $(PYTHON) -m venv $(PEER_VENV) && $(PEER_VENV)/bin/pip install -q numpy scipy cvxpy clarabel highspy==1.15.1 highspy-extras==1.15.1; }
	$(PEER_VENV)/bin/python benches/peers.py --ubapp target/release/ubapp $(PEER_CASES)

clean:
	$(CARGO) clean

# The UBaPP paper's figures (MSE vs ε, MSE vs K, heat maps of P) with the baselines, into docs/figures/.
paper: deps
	$(CARGO) run --release --example reproduce_paper -- docs/figures > docs/figures/paper_numbers.csv
