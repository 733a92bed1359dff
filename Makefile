# docsync: `make test` runs every test; `make demo` shows two replicas syncing.
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: build test demo deps man clean lint format

deps:
	./scripts/install-deps.sh
	./scripts/install-test-servers.sh

build: deps
	swift build

test: build
	swift test

demo: build
	./examples/quickstart.sh

# The code's one format (.swift-format: 4 spaces, 120 columns); CI fails on any difference.
lint:
	swift format lint --strict --recursive Package.swift Sources Tests Fuzz

format:
	swift format format --in-place --recursive Package.swift Sources Tests Fuzz

# Regenerates the command reference part of man/docsync.1 from the --help text.
man: build
	./scripts/generate-man.sh

clean:
	rm -rf .build
