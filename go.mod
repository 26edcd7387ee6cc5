module github.com/rocm/sgpu-queue

go 1.24

require github.com/sethvargo/go-githubactions v1.3.2 // indirect
