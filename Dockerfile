# The container action's image: a static sgpu-queue on a small image with CA
# certificates. The release workflow (.github/workflows/release.yml) builds it for
# linux/amd64 and linux/arm64 and publishes it as ghcr.io/rocm/sgpu-queue, which
# action.yml runs; the project's own CI builds it from HEAD through
# .github/actions/dev. Local builds: `docker build .`.
#
# Both base images are pinned by the digest of their multi-arch index, so a tag
# moved upstream cannot change what a release is built from (and the digests are
# verified by the registry on every pull). The release workflow says when a pinned
# tag has moved on, so a maintainer can review and bump tag and digest together.
# They are build arguments: where no registry is reachable, pass locally made ones
# (a Go image made from a local toolchain and a busybox image; see docs/image.md
# and e2e/image_test.go).
ARG GO_IMAGE=golang:1.26.4-alpine@sha256:7a3e50096189ad57c9f9f865e7e4aa8585ed1585248513dc5cda498e2f41812c
ARG RUNTIME_IMAGE=alpine:3.21@sha256:48b0309ca019d89d40f670aa1bc06e426dc0931948452e8491e3d65087abc07d

# The Go stage runs on the build machine's platform and cross-compiles (CGO off), so
# the arm64 image needs no emulated compiler. BuildKit sets BUILDPLATFORM, TARGETOS
# and TARGETARCH; the default below is for the classic builder, which sets none (on
# an arm64 host without BuildKit, pass --build-arg BUILDPLATFORM=linux/arm64).
ARG BUILDPLATFORM=linux/amd64
FROM --platform=${BUILDPLATFORM} ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG TARGETOS
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /sgpu-queue .

# A shell stays in the image: without the container input, suite commands run in
# the action's own container (the demo self-test does).
FROM ${RUNTIME_IMAGE}
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /sgpu-queue /sgpu-queue
ENTRYPOINT ["/sgpu-queue", "action"]
