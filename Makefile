# Two commands on a fresh machine: `make demo` and `make test`.
CARGO ?= cargo
MODEL ?= models/bernoulli-k100.toml

.PHONY: deps build demo test bench clean

# HiGHS is built from source by the highs-sys crate: it needs cmake and libclang.
deps:
	@if ! command -v cmake >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && ! ls /usr/lib/*/libclang*.so* >/dev/null 2>&1; then \
		echo "installing cmake and libclang-dev (needed to build HiGHS)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq cmake libclang-dev >/dev/null; \
	fi

build: deps
	$(CARGO) build --release

demo: build
	./target/release/ubapp solve $(MODEL)

test: deps
	$(CARGO) test --release

# Timing table (README, Performance): LP path and chain solver at the issue's sizes; criterion benches.
bench: build
	./target/release/ubapp bench
	$(CARGO) bench --bench chain

clean:
	$(CARGO) clean
