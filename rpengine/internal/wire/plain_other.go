//go:build !amd64 || purego

package wire

const hasAVX2 = false

func plainAVX2(s []byte) int { return 0 }

func decodeAVX2(dst, src []byte) int { return 0 }
