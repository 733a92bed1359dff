# docsync: `make test` runs every test; `make demo` shows two replicas syncing.
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: build test demo deps man clean

deps:
	./scripts/install-deps.sh
	./scripts/install-test-servers.sh

build: deps
	swift build

test: build
	swift test

demo: build
	./examples/quickstart.sh

# Regenerates the command reference part of man/docsync.1 from the --help text.
man: build
	./scripts/generate-man.sh

clean:
	rm -rf .build
