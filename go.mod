module github.com/rocm/sgpu-queue

go 1.25.0

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.16.0
	github.com/joshdk/go-junit v1.0.0
	github.com/tonistiigi/go-actions-cache v0.0.0-20260930145529-afe8013b5ac4
)

require (
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.10.0 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/storage/azblob v1.5.0 // indirect
	github.com/dimchansky/utfbom v1.1.1 // indirect
	github.com/golang-jwt/jwt/v5 v5.2.2 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/sethvargo/go-githubactions v1.3.2 // indirect
	golang.org/x/net v0.29.0 // indirect
	golang.org/x/sync v0.8.0 // indirect
	golang.org/x/text v0.19.0 // indirect
)
