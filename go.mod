module github.com/rocm/sgpu-queue

go 1.24
