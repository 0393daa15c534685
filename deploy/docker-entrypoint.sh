#!/bin/sh
# The image's entrypoint: the first argument picks the program.
#   coordinator ARGS...   the coordinator (serve, token, run, ...)
#   worker ARGS...        a worker (--coordinator URL ...)
#   engine ARGS...        the UCI engine
# Anything else is run as given (e.g. `sh` to look around).
set -e
case "${1:-help}" in
    coordinator | worker | engine)
        prog=$1
        shift
        exec "/usr/local/bin/$prog" "$@"
        ;;
    help | --help | -h)
        echo "usage: coordinator ARGS... | worker ARGS... | engine ARGS..." >&2
        exit 2
        ;;
    *)
        exec "$@"
        ;;
esac
