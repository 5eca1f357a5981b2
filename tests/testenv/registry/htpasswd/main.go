// htpasswd USER PASSWORD: one htpasswd line with a bcrypt hash, the only form the distribution
// registry's htpasswd auth accepts (Python's standard library cannot make one portably). Built in
// the distribution module, whose go.sum already pins golang.org/x/crypto.
package main

import (
	"fmt"
	"os"

	"golang.org/x/crypto/bcrypt"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: htpasswd USER PASSWORD")
		os.Exit(2)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(os.Args[2]), bcrypt.MinCost)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s:%s\n", os.Args[1], hash)
}
