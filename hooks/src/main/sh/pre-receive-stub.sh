#!/bin/sh
# SPB Git pre-receive gate: this file is a shell stub followed by a Java archive. See docs/hooks.md.
exec "${JAVA:-java}" -jar "$0" "$@"
