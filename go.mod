module github.com/rocm/sgpu-queue

go 1.24

require github.com/google/go-github/v62 v62.0.0

require github.com/google/go-querystring v1.1.0 // indirect
