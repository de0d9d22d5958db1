# syntax=docker/dockerfile:1
# gpath's container image: the GPU shortest-path service on NVIDIA's CUDA 13.0 / Ubuntu 24.04 images.
#
#   docker build -t gpath .
#   docker run --gpus all -p 8080:8080 gpath          # the built-in generated road graph
#   docker run --gpus all -p 8080:8080 -v "$PWD/gpath.conf:/etc/gpath/gpath.conf:ro" \
#     -e GPATH_CONFIG=/etc/gpath/gpath.conf gpath     # a configured one
#
# The build stage runs deploy/build.sh, the script CI also runs outside Docker (tests/test_deploy.sh),
# so the image and CI build the same way. The runtime stage holds the binary and the shared libraries
# it links (tests/check_deploy.py checks this list against the Makefile's and the binary's).
# CI lints this file without a Docker engine: tests/test_deploy.sh.

FROM nvidia/cuda:13.0.2-devel-ubuntu24.04 AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
# Build packages first, in their own layer, so a source change does not reinstall them. The same
# script runs again inside build.sh and then finds nothing missing.
COPY deploy/install-deps.sh deploy/install-deps.sh
RUN bash deploy/install-deps.sh run && bash deploy/install-deps.sh web && rm -rf /var/lib/apt/lists/*
COPY . .
# --require-cuda: fail rather than ship an image whose CUDA backend was not compiled;
# --require-web: nor one whose map page (/) and API reference (/docs) would answer 501.
RUN bash deploy/build.sh --prefix /opt/gpath --build build --require-cuda --require-web

FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04 AS runtime
# The VERSION file's number (tests/test_version.sh checks it; tag the image gpath:<it>).
LABEL org.opencontainers.image.title="gpath" \
      org.opencontainers.image.version="0.2.0"
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Runtime libraries only (Ubuntu 24.04 names), plus curl for the HEALTHCHECK. Versions follow the
# pinned base image's Ubuntu release rather than per-package pins.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd12t64 libcjson1 libinih1 libpq5 libsqlite3-0 zlib1g libxml2 libmetis5 \
      libexpat1 libbz2-1.0 \
      curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 gpath \
 && useradd --system --uid 10001 --gid gpath --home-dir /var/cache/gpath --no-create-home \
      --shell /usr/sbin/nologin gpath \
 && install -d -o gpath -g gpath -m 0750 /var/cache/gpath \
 && install -d -o root -g gpath -m 0750 /etc/gpath
COPY --from=build /opt/gpath /opt/gpath
# The matrix cache lives on the cache volume; mount a config file at /etc/gpath/gpath.conf and set
# GPATH_CONFIG=/etc/gpath/gpath.conf (or pass --config). Nothing configured: the built-in graph.
ENV PATH=/opt/gpath/bin:$PATH \
    GPATH_CACHE_PATH=/var/cache/gpath/gpath-cache.sqlite \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
WORKDIR /var/cache/gpath
VOLUME ["/etc/gpath", "/var/cache/gpath"]
USER 10001:10001
EXPOSE 8080
# GPATH_PORT set at run time moves the health check along with the server.
HEALTHCHECK --interval=15s --timeout=3s --start-period=120s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${GPATH_PORT:-8080}/health" >/dev/null || exit 1
# SIGTERM (docker stop) makes the server stop accepting and drain requests in flight for
# shutdown_grace_s (30 s by default): give `docker stop -t` at least that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/gpath/bin/gpath", "serve"]
CMD []
