// Package pki makes the lab's throw-away certificate authorities and leaf certificates
// (ECDSA P-256, PKCS#8 keys) with crypto/x509, so neither MariaDB's TLS nor the tunnel's
// mutual TLS depends on openssl being installed.
package pki
