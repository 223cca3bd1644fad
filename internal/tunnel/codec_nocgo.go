//go:build !cgo

package tunnel

// codec: built without cgo, every level is pure Go.
var codec = goCodec
