# Builds the `shelf` binary (statically linked Swift runtime) and a small image to run it.
#   docker build -t shelf .
#   docker run --rm -it --device /dev/fuse --cap-add SYS_ADMIN shelf mount /mnt --foreground
FROM swift:6.3-bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libfuse3-dev pkg-config libsqlite3-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources Sources
COPY Tests Tests
RUN swift build -c release --product shelf --static-swift-stdlib

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fuse3 libsqlite3-0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/.build/release/shelf /usr/local/bin/shelf
COPY samples /usr/share/shelf/samples
ENV SHELF_LIBRARY=/library
VOLUME /library
ENTRYPOINT ["shelf"]
