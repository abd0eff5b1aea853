//go:build amd64 && !purego

#include "textflag.h"

// Tables of decodeAVX2, each 16 bytes repeated for both 128-bit lanes
// (VPSHUFB looks up within a lane).
//
// b64lo and b64hi classify a byte by its low and high nibble: the byte is
// in the alphabet exactly when b64lo[low] & b64hi[high] is 0. Each high
// nibble has one class bit: 0x01 for 2 ('+' is 0x2B, '/' 0x2F), 0x02 for
// 3 (digits 0x30-0x39), 0x04 for 4 and 6 (letters 0x41-0x4F, 0x61-0x6F),
// 0x08 for 5 and 7 (letters 0x50-0x5A, 0x70-0x7A), 0x10 for every other
// (never valid); b64lo[low] has the bits of the classes in which that low
// nibble is not a letter of the alphabet.
DATA b64lo<>+0x00(SB)/8, $0x1111111111111115
DATA b64lo<>+0x08(SB)/8, $0x1A1B1B1B1A131111
DATA b64lo<>+0x10(SB)/8, $0x1111111111111115
DATA b64lo<>+0x18(SB)/8, $0x1A1B1B1B1A131111
GLOBL b64lo<>(SB), RODATA|NOPTR, $32

DATA b64hi<>+0x00(SB)/8, $0x0804080402011010
DATA b64hi<>+0x08(SB)/8, $0x1010101010101010
DATA b64hi<>+0x10(SB)/8, $0x0804080402011010
DATA b64hi<>+0x18(SB)/8, $0x1010101010101010
GLOBL b64hi<>(SB), RODATA|NOPTR, $32

// b64roll is what to add to a valid byte to get its value, by high nibble
// (minus one for '/'): '/' +16, '+' +19, digits +4, A-Z -65, a-z -71.
DATA b64roll<>+0x00(SB)/8, $0xB9B9BFBF04131000
DATA b64roll<>+0x08(SB)/8, $0x0000000000000000
DATA b64roll<>+0x10(SB)/8, $0xB9B9BFBF04131000
DATA b64roll<>+0x18(SB)/8, $0x0000000000000000
GLOBL b64roll<>(SB), RODATA|NOPTR, $32

// b64pack takes bytes 2,1,0 of each 32-bit group (the 24 bits of four
// characters, most significant first) into the low 12 bytes of a lane.
DATA b64pack<>+0x00(SB)/8, $0x090A040506000102
DATA b64pack<>+0x08(SB)/8, $0x808080800C0D0E08
DATA b64pack<>+0x10(SB)/8, $0x090A040506000102
DATA b64pack<>+0x18(SB)/8, $0x808080800C0D0E08
GLOBL b64pack<>(SB), RODATA|NOPTR, $32

// b64perm joins the two lanes' 12 bytes: dwords 0,1,2,4,5,6.
DATA b64perm<>+0x00(SB)/8, $0x0000000100000000
DATA b64perm<>+0x08(SB)/8, $0x0000000400000002
DATA b64perm<>+0x10(SB)/8, $0x0000000600000005
DATA b64perm<>+0x18(SB)/8, $0x0000000700000007
GLOBL b64perm<>(SB), RODATA|NOPTR, $32

// func decodeAVX2(dst, src []byte) int
// 32 characters a step: classify (VPTEST of the two nibble lookups),
// translate (VPSHUFB of b64roll by high nibble), merge the 6-bit values
// pairwise (VPMADDUBSW, then VPMADDWD) into 24 bits per 4 characters, and
// store the 24 bytes of the step with one 32-byte store, which is why dst
// needs 32 bytes of room for every step.
TEXT ·decodeAVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), DX
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ SI, R8

	VMOVDQU      b64lo<>(SB), Y8
	VMOVDQU      b64hi<>(SB), Y9
	VMOVDQU      b64roll<>(SB), Y10
	VMOVDQU      b64pack<>(SB), Y13
	VMOVDQU      b64perm<>(SB), Y14
	MOVL         $0x0f0f0f0f, AX
	MOVL         AX, X11
	VPBROADCASTD X11, Y11           // low nibble mask
	MOVL         $0x2f2f2f2f, AX
	MOVL         AX, X12
	VPBROADCASTD X12, Y12           // '/'
	MOVL         $0x01400140, AX
	MOVL         AX, X15
	VPBROADCASTD X15, Y15           // a*64+b per byte pair
	MOVL         $0x00011000, AX
	MOVL         AX, X7
	VPBROADCASTD X7, Y7             // ab*4096+cd per word pair

loop:
	CMPQ       CX, $32
	JB         done
	CMPQ       DX, $32
	JB         done
	VMOVDQU    (SI), Y0
	VPSRLD     $4, Y0, Y1
	VPAND      Y11, Y1, Y1          // high nibbles
	VPAND      Y11, Y0, Y2          // low nibbles
	VPSHUFB    Y2, Y8, Y3
	VPSHUFB    Y1, Y9, Y4
	VPTEST     Y4, Y3
	JNZ        done                 // a byte outside the alphabet
	VPCMPEQB   Y12, Y0, Y5          // '/': -1
	VPADDB     Y5, Y1, Y5
	VPSHUFB    Y5, Y10, Y5
	VPADDB     Y5, Y0, Y0           // 6-bit values
	VPMADDUBSW Y15, Y0, Y0
	VPMADDWD   Y7, Y0, Y0
	VPSHUFB    Y13, Y0, Y0
	VPERMD     Y0, Y14, Y0
	VMOVDQU    Y0, (DI)
	ADDQ       $32, SI
	SUBQ       $32, CX
	ADDQ       $24, DI
	SUBQ       $24, DX
	JMP        loop

done:
	SUBQ       R8, SI
	MOVQ       SI, ret+48(FP)
	VZEROUPPER
	RET
