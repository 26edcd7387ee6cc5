# The container action: a static sgpu-queue on a small image with CA certificates.
# The runner rebuilds this image on every job, so the module download is its own
# cached layer, before the sources are copied in. Both base images are build
# arguments: where no registry is reachable, pass locally made ones
# (../shared/tools/go-base-image.sh and a busybox image; see README).
ARG GO_IMAGE=golang:1.26-alpine
ARG RUNTIME_IMAGE=alpine:3.21

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /sgpu-queue .

# A shell stays in the image: without the container input, suite commands run in
# the action's own container (the demo self-test does).
FROM ${RUNTIME_IMAGE}
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /sgpu-queue /sgpu-queue
ENTRYPOINT ["/sgpu-queue", "action"]
