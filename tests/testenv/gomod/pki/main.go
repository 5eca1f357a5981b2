// Command pki writes the throw-away key material of one test cluster: a CA, a serving certificate
// for 127.0.0.1/localhost signed by it, and the service-account signing key pair. It uses only
// the standard library so the test cluster needs neither openssl nor a Python crypto package.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func newKey() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatalf("generate key: %v", err)
	}
	return k
}

func write(dir, name, typ string, der []byte) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		log.Fatalf("write %s: %v", path, err)
	}
}

func writeKey(dir, name string, k *ecdsa.PrivateKey) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		log.Fatalf("marshal key: %v", err)
	}
	write(dir, name, "PRIVATE KEY", der)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		log.Fatalf("serial: %v", err)
	}
	return n
}

func main() {
	dir := flag.String("dir", "", "output directory (required)")
	extraIPs := flag.String("san-ips", "", "comma-separated extra IP addresses for the serving certificate "+
		"(where pods reach the API server)")
	flag.Parse()
	if *dir == "" {
		log.Fatal("--dir is required")
	}
	now := time.Now().Add(-time.Hour)
	notAfter := now.Add(10 * 24 * time.Hour)

	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "trainerctl-testenv-ca"},
		NotBefore:             now,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		log.Fatalf("create CA: %v", err)
	}
	caCert, _ := x509.ParseCertificate(caDER)

	srvKey := newKey()
	srvTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("127.100.0.1")},
	}
	for _, ip := range strings.Split(*extraIPs, ",") {
		if ip = strings.TrimSpace(ip); ip != "" {
			parsed := net.ParseIP(ip)
			if parsed == nil {
				log.Fatalf("--san-ips: %q is not an IP address", ip)
			}
			srvTmpl.IPAddresses = append(srvTmpl.IPAddresses, parsed)
		}
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		log.Fatalf("create serving cert: %v", err)
	}

	saKey := newKey()
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		log.Fatalf("marshal SA public key: %v", err)
	}

	write(*dir, "ca.crt", "CERTIFICATE", caDER)
	write(*dir, "serving.crt", "CERTIFICATE", srvDER)
	writeKey(*dir, "serving.key", srvKey)
	writeKey(*dir, "sa.key", saKey)
	write(*dir, "sa.pub", "PUBLIC KEY", saPub)
}
