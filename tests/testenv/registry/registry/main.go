// The distribution registry (cmd/registry of github.com/distribution/distribution/v3, as released)
// with only what the registry tests configure: htpasswd and token auth, the pull-through proxy in
// front of `crane registry serve`, filesystem and in-memory storage. The release's main also links
// the cloud storage drivers (Azure, GCS, S3), which the tests never use and which would triple the
// build.
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/auth/token"
	_ "github.com/distribution/distribution/v3/registry/proxy"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	// nolint:errcheck (RootCmd exits non-zero by itself on failure, as in cmd/registry)
	registry.RootCmd.Execute()
}
