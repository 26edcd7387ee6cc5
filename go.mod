module github.com/rocm/sgpu-queue

go 1.24

require github.com/joshdk/go-junit v1.0.0
