//go:build !amd64 || purego

package stream

const hasAVX2 = false

func plainAVX2(s []byte) int { return 0 }
