//go:build amd64 && !purego

#include "textflag.h"

// func indexSpecialAVX2(p []byte) int
// The index of the first byte of p's whole 32-byte blocks that is '"',
// '\\' or a control byte (below 0x20), or the length of those blocks when
// none is. Two blocks a step.
TEXT ·indexSpecialAVX2(SB), NOSPLIT, $0-32
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	ANDQ $-32, CX
	MOVQ SI, DI
	ADDQ SI, CX // end of the blocks
	// Every SSE instruction (MOVQ to an X register) before the first
	// that writes a Y register: one after it, with the upper halves
	// dirty, cost hundreds of nanoseconds here.
	MOVL $0x22, AX
	MOVQ AX, X1
	MOVL $0x5c, AX
	MOVQ AX, X2
	MOVL $0x1f, AX
	MOVQ AX, X3
	VPBROADCASTB X1, Y1 // '"'
	VPBROADCASTB X2, Y2 // '\\'
	VPBROADCASTB X3, Y3 // the largest control byte

two:
	LEAQ 64(SI), AX
	CMPQ AX, CX
	JHI  one
	VMOVDQU (SI), Y4
	VMOVDQU 32(SI), Y5
	VPCMPEQB Y4, Y1, Y6
	VPCMPEQB Y4, Y2, Y7
	VPOR     Y6, Y7, Y6
	VPMINUB  Y4, Y3, Y7
	VPCMPEQB Y4, Y7, Y7 // x <= 0x1f
	VPOR     Y6, Y7, Y6
	VPCMPEQB Y5, Y1, Y8
	VPCMPEQB Y5, Y2, Y9
	VPOR     Y8, Y9, Y8
	VPMINUB  Y5, Y3, Y9
	VPCMPEQB Y5, Y9, Y9
	VPOR     Y8, Y9, Y8
	VPOR     Y6, Y8, Y9
	VPTEST   Y9, Y9
	JNZ      found2
	MOVQ     AX, SI
	JMP      two

one:
	CMPQ SI, CX
	JAE  none
	VMOVDQU (SI), Y4
	VPCMPEQB Y4, Y1, Y6
	VPCMPEQB Y4, Y2, Y7
	VPOR     Y6, Y7, Y6
	VPMINUB  Y4, Y3, Y7
	VPCMPEQB Y4, Y7, Y7
	VPOR     Y6, Y7, Y6
	VPMOVMSKB Y6, AX
	TESTL    AX, AX
	JNZ      found1

none:
	SUBQ DI, CX
	MOVQ CX, ret+24(FP)
	VZEROUPPER
	RET

found2:
	VPMOVMSKB Y6, AX
	VPMOVMSKB Y8, DX
	SHLQ      $32, DX
	ORQ       DX, AX

found1:
	BSFQ AX, AX
	ADDQ SI, AX
	SUBQ DI, AX
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func quoteEndAVX2(p []byte) (n int, esc, stopped bool)
// Scans p 64 bytes a step, then 32, for the end of a string's body: the
// first '"' or control byte, or backslash not followed by one of the
// short escapes ("\\bfnrt), which it skips (and reports in esc). stopped
// reports that p[n] is such a byte; otherwise fewer than 32 bytes are
// left at n and the caller scans them.
//
// A block with a backslash has its escapes found with masks, as
// simdjson's first stage finds them (an odd run of backslashes escapes
// the byte after it; the carry of an addition follows the runs), instead
// of one step of the loop per escape: a lorebook entry's text has an
// escape every few dozen bytes, and each step mispredicted a branch.
TEXT ·quoteEndAVX2(SB), NOSPLIT, $0-34
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	MOVQ SI, DI
	ADDQ SI, CX // end
	XORL R8, R8 // esc
	XORL R9, R9 // the block starts with an escaped byte
	MOVL $0x22, AX // the SSE moves first (see indexSpecialAVX2)
	MOVQ AX, X1
	MOVL $0x5c, AX
	MOVQ AX, X2
	MOVL $0x1f, AX
	MOVQ AX, X3
	MOVL $0x0f, AX
	MOVQ AX, X10
	VPBROADCASTB X1, Y1
	VPBROADCASTB X2, Y2
	VPBROADCASTB X3, Y3
	JMP  block // the first block alone: most strings end in it

	// After the first block, 64 bytes a step while there are: the masks
	// of a step are words.
enter64:
	LEAQ 64(SI), AX
	CMPQ AX, CX
	JHI  block
	VPBROADCASTB X10, Y10              // low nibble
	VMOVDQU escHigh<>(SB), Y11         // the short escapes' classes by high nibble
	VMOVDQU escLow<>(SB), Y12          // and by low nibble
	VPXOR   Y13, Y13, Y13

block64:
	LEAQ 64(SI), AX
	CMPQ AX, CX
	JHI  block
	VMOVDQU (SI), Y4
	VMOVDQU 32(SI), Y5
	VPCMPEQB Y4, Y1, Y6 // '"'
	VPCMPEQB Y5, Y1, Y7
	VPCMPEQB Y4, Y2, Y8 // '\\'
	VPCMPEQB Y5, Y2, Y9
	VPMINUB  Y4, Y3, Y14
	VPCMPEQB Y4, Y14, Y14 // control
	VPMINUB  Y5, Y3, Y15
	VPCMPEQB Y5, Y15, Y15
	VPOR     Y6, Y7, Y0
	VPOR     Y8, Y0, Y0
	VPOR     Y9, Y0, Y0
	VPOR     Y14, Y0, Y0
	VPOR     Y15, Y0, Y0
	VPTEST   Y0, Y0
	JNZ      look64
	TESTQ    R9, R9
	JNZ      look64
	ADDQ     $64, SI
	JMP      block64

look64:
	VPMOVMSKB Y6, R10
	VPMOVMSKB Y7, AX
	SHLQ      $32, AX
	ORQ       AX, R10 // quotes
	VPMOVMSKB Y14, R12
	VPMOVMSKB Y15, AX
	SHLQ      $32, AX
	ORQ       AX, R12 // controls
	VPMOVMSKB Y8, R11
	VPMOVMSKB Y9, AX
	SHLQ      $32, AX
	ORQ       AX, R11 // backslashes
	MOVQ      R11, AX
	ORQ       R9, AX
	JNZ       escapes64
	ORQ       R12, R10
	BSFQ      R10, AX // a '"' or control byte
	ADDQ      AX, SI
	JMP       stop

escapes64:
	// The bytes that are not a short escape's second byte: their class
	// by high nibble and by low nibble have no bit in common.
	VPSRLW   $4, Y4, Y6
	VPAND    Y10, Y6, Y6
	VPSHUFB  Y6, Y11, Y6
	VPAND    Y10, Y4, Y7
	VPSHUFB  Y7, Y12, Y7
	VPAND    Y6, Y7, Y6
	VPCMPEQB Y13, Y6, Y6
	VPSRLW   $4, Y5, Y8
	VPAND    Y10, Y8, Y8
	VPSHUFB  Y8, Y11, Y8
	VPAND    Y10, Y5, Y9
	VPSHUFB  Y9, Y12, Y9
	VPAND    Y8, Y9, Y8
	VPCMPEQB Y13, Y8, Y8
	VPMOVMSKB Y6, R13
	VPMOVMSKB Y8, AX
	SHLQ      $32, AX
	ORQ       AX, R13 // not a short escape's second byte
	// The escaped bytes (see above); R9 is 0 or 1.
	MOVQ     R9, AX
	NOTQ     AX
	ANDQ     AX, R11
	LEAQ     (R9)(R11*2), BX // follows a backslash
	MOVQ     BX, DX
	NOTQ     DX
	ANDQ     R11, DX
	MOVQ     $0xaaaaaaaaaaaaaaaa, AX
	ANDQ     AX, DX          // runs that start at an odd byte
	XORL     R9, R9
	ADDQ     R11, DX         // carried through the runs
	SETCS    R9B             // the next step starts with an escaped byte
	ADDQ     DX, DX
	NOTQ     AX
	XORQ     AX, DX
	ANDQ     BX, DX          // escaped bytes
	ANDQ     DX, R13         // escaped bytes that no short escape is
	TESTQ    $1, R13
	JNZ      before          // the step before ended with a wrong escape's backslash
	SHRQ     $1, R13         // the backslashes of wrong escapes
	MOVQ     DX, AX
	NOTQ     AX
	ANDQ     AX, R10         // quotes not escaped
	ORQ      R12, R10
	ORQ      R13, R10        // the stops
	JZ       on64
	BSFQ     R10, AX
	ADDQ     AX, SI
	// esc: an escaped byte before the stop.
	MOVQ     R10, BX
	NEGQ     BX
	ANDQ     R10, BX         // the stop's bit
	DECQ     BX              // the bits before it
	TESTQ    DX, BX
	JZ       stop
	MOVL     $1, R8
	JMP      stop

on64:
	TESTQ    DX, DX
	JZ       next64
	MOVL     $1, R8

next64:
	ADDQ $64, SI
	JMP  block64

before:
	DECQ SI
	JMP  stop

block:
	LEAQ 32(SI), AX
	CMPQ AX, CX
	JHI  tail
	VMOVDQU (SI), Y4
	VPCMPEQB Y4, Y1, Y6 // '"'
	VPCMPEQB Y4, Y2, Y7 // '\\'
	VPMINUB  Y4, Y3, Y5
	VPCMPEQB Y4, Y5, Y5 // control
	VPOR     Y6, Y7, Y8
	VPOR     Y5, Y8, Y8
	VPMOVMSKB Y8, AX
	ORL      R9, AX
	JNZ      look
	ADDQ     $32, SI
	JMP      enter64

look:
	VPMOVMSKB Y7, R11 // backslashes
	TESTL    R11, R11
	JNZ      escapes
	TESTL    R9, R9
	JNZ      escapes
	BSFL     AX, AX // a '"' or control byte
	ADDQ     AX, SI
	JMP      stop

escapes:
	VPMOVMSKB Y6, R10 // quotes
	VPMOVMSKB Y5, R12 // controls
	VPCMPEQB shortLetters<>+0(SB), Y4, Y8
	VPCMPEQB shortLetters<>+32(SB), Y4, Y9
	VPOR     Y8, Y9, Y8
	VPCMPEQB shortLetters<>+64(SB), Y4, Y9
	VPOR     Y8, Y9, Y8
	VPCMPEQB shortLetters<>+96(SB), Y4, Y9
	VPOR     Y8, Y9, Y8
	VPCMPEQB shortLetters<>+128(SB), Y4, Y9
	VPOR     Y8, Y9, Y8
	VPOR     Y8, Y6, Y8
	VPOR     Y8, Y7, Y8
	VPMOVMSKB Y8, R13 // the bytes a short escape may escape
	// A backslash escaped by the block before escapes nothing.
	MOVL     R9, AX
	NOTL     AX
	ANDL     AX, R11
	LEAQ     (R9)(R11*2), BX // follows a backslash
	MOVL     BX, DX
	NOTL     DX
	ANDL     R11, DX
	ANDL     $0xaaaaaaaa, DX // runs that start at an odd byte
	ADDQ     R11, DX         // carried through the runs
	MOVQ     DX, R9
	SHRQ     $32, R9         // the next block starts with an escaped byte
	ADDL     DX, DX
	XORL     $0x55555555, DX
	ANDL     BX, DX          // escaped bytes
	NOTL     R13
	ANDL     DX, R13         // escaped bytes that no short escape is
	MOVL     DX, AX
	NOTL     AX
	ANDL     AX, R10         // quotes not escaped
	ORL      R12, R10
	BTSQ     $32, R10
	BSFQ     R10, AX         // the first '"' or control byte, or 32
	BTSQ     $33, R13
	BSFQ     R13, BX
	DECQ     BX              // the backslash of the first wrong escape (-1: the block before's last byte), or 32
	CMPQ     BX, AX
	CMOVQLT  BX, AX          // the stop, or 32
	// esc: a (valid) escape before the stop.
	BTSQ     $32, DX
	BSFQ     DX, BX
	CMPQ     BX, AX
	JGE      noesc
	MOVL     $1, R8

noesc:
	CMPQ     AX, $32
	JEQ      next
	ADDQ     AX, SI
	JMP      stop

next:
	ADDQ $32, SI
	JMP  enter64

tail:
	SUBQ R9, SI // an escaping backslash the last block ended with: scan from it
	SUBQ DI, SI
	MOVQ SI, n+24(FP)
	MOVB R8, esc+32(FP)
	MOVB $0, stopped+33(FP)
	VZEROUPPER
	RET

stop:
	SUBQ DI, SI
	MOVQ SI, n+24(FP)
	MOVB R8, esc+32(FP)
	MOVB $1, stopped+33(FP)
	VZEROUPPER
	RET

// The classes of the second bytes of the short escapes ("\\bfnrt), by
// their high nibbles (0x2: 1, 0x5: 2, 0x6: 4, 0x7: 8) and low nibbles
// ('"', 'b' and 'r' share 0x2), once per lane: a byte is one of them when
// its two classes share a bit.
DATA escHigh<>+0(SB)/8, $0x0804020000010000
DATA escHigh<>+8(SB)/8, $0x0000000000000000
DATA escHigh<>+16(SB)/8, $0x0804020000010000
DATA escHigh<>+24(SB)/8, $0x0000000000000000
GLOBL escHigh<>(SB), RODATA|NOPTR, $32

DATA escLow<>+0(SB)/8, $0x00040008000d0000
DATA escLow<>+8(SB)/8, $0x0004000200000000
DATA escLow<>+16(SB)/8, $0x00040008000d0000
DATA escLow<>+24(SB)/8, $0x0004000200000000
GLOBL escLow<>(SB), RODATA|NOPTR, $32

// The letters of the short escapes, 'b', 'f', 'n', 'r' and 't', each
// repeated over a block.
DATA shortLetters<>+0(SB)/8, $0x6262626262626262
DATA shortLetters<>+8(SB)/8, $0x6262626262626262
DATA shortLetters<>+16(SB)/8, $0x6262626262626262
DATA shortLetters<>+24(SB)/8, $0x6262626262626262
DATA shortLetters<>+32(SB)/8, $0x6666666666666666
DATA shortLetters<>+40(SB)/8, $0x6666666666666666
DATA shortLetters<>+48(SB)/8, $0x6666666666666666
DATA shortLetters<>+56(SB)/8, $0x6666666666666666
DATA shortLetters<>+64(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA shortLetters<>+72(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA shortLetters<>+80(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA shortLetters<>+88(SB)/8, $0x6e6e6e6e6e6e6e6e
DATA shortLetters<>+96(SB)/8, $0x7272727272727272
DATA shortLetters<>+104(SB)/8, $0x7272727272727272
DATA shortLetters<>+112(SB)/8, $0x7272727272727272
DATA shortLetters<>+120(SB)/8, $0x7272727272727272
DATA shortLetters<>+128(SB)/8, $0x7474747474747474
DATA shortLetters<>+136(SB)/8, $0x7474747474747474
DATA shortLetters<>+144(SB)/8, $0x7474747474747474
DATA shortLetters<>+152(SB)/8, $0x7474747474747474
GLOBL shortLetters<>(SB), RODATA|NOPTR, $160

// The UTF-8 validation of Keiser and Lemire ("Validating UTF-8 in less
// than one instruction per byte", 2021): three 16-entry tables, indexed
// by the high and low nibbles of the previous byte and the high nibble of
// each byte, flag every invalid two-byte pattern; a byte that must be the
// second or third continuation of a three- or four-byte sequence is
// checked against the bytes two and three back. The bits of the tables:
// TOO_SHORT 0x01, TOO_LONG 0x02, OVERLONG_3 0x04, TOO_LARGE 0x08,
// SURROGATE 0x10, OVERLONG_2 0x20, TOO_LARGE_1000 and OVERLONG_4 0x40,
// TWO_CONTS 0x80. Each table is stored twice, once per 128-bit lane.

// byte 1 high nibble
DATA utf8T1<>+0x00(SB)/8, $0x0202020202020202
DATA utf8T1<>+0x08(SB)/8, $0x4915012180808080
DATA utf8T1<>+0x10(SB)/8, $0x0202020202020202
DATA utf8T1<>+0x18(SB)/8, $0x4915012180808080
GLOBL utf8T1<>(SB), RODATA|NOPTR, $32

// byte 1 low nibble
DATA utf8T2<>+0x00(SB)/8, $0xcbcbcb8b8383a3e7
DATA utf8T2<>+0x08(SB)/8, $0xcbcbdbcbcbcbcbcb
DATA utf8T2<>+0x10(SB)/8, $0xcbcbcb8b8383a3e7
DATA utf8T2<>+0x18(SB)/8, $0xcbcbdbcbcbcbcbcb
GLOBL utf8T2<>(SB), RODATA|NOPTR, $32

// byte 2 high nibble
DATA utf8T3<>+0x00(SB)/8, $0x0101010101010101
DATA utf8T3<>+0x08(SB)/8, $0x01010101babaaee6
DATA utf8T3<>+0x10(SB)/8, $0x0101010101010101
DATA utf8T3<>+0x18(SB)/8, $0x01010101babaaee6
GLOBL utf8T3<>(SB), RODATA|NOPTR, $32

// The largest values of the last three bytes of a block that end their
// sequence: a larger one leads bytes the block does not hold.
DATA utf8Max<>+0x00(SB)/8, $0xffffffffffffffff
DATA utf8Max<>+0x08(SB)/8, $0xffffffffffffffff
DATA utf8Max<>+0x10(SB)/8, $0xffffffffffffffff
DATA utf8Max<>+0x18(SB)/8, $0xbfdfefffffffffff
GLOBL utf8Max<>(SB), RODATA|NOPTR, $32

// UTF8_BLOCK checks the block in Y0, which follows the block in Y14
// (see utf8BlocksAVX2), and moves on to the next.
#define UTF8_BLOCK \
	VPERM2I128 $0x21, Y0, Y14, Y1 \
	VPALIGNR   $15, Y1, Y0, Y2 \
	VPALIGNR   $14, Y1, Y0, Y3 \
	VPALIGNR   $13, Y1, Y0, Y4 \
	VPSRLW     $4, Y2, Y1 \
	VPAND      Y12, Y1, Y1 \
	VPSHUFB    Y1, Y11, Y1 \
	VPAND      Y12, Y2, Y2 \
	VPSHUFB    Y2, Y10, Y2 \
	VPAND      Y2, Y1, Y1 \
	VPSRLW     $4, Y0, Y2 \
	VPAND      Y12, Y2, Y2 \
	VPSHUFB    Y2, Y9, Y2 \
	VPAND      Y2, Y1, Y1 \
	VPSUBUSB   Y7, Y3, Y3 \
	VPSUBUSB   Y6, Y4, Y4 \
	VPOR       Y4, Y3, Y3 \
	VPAND      Y5, Y3, Y3 \
	VPXOR      Y3, Y1, Y1 \
	VPOR       Y1, Y15, Y15 \
	VPSUBUSB   Y8, Y0, Y13 \
	VMOVDQU    Y0, Y14 \
	ADDQ       $32, SI

// func utf8BlocksAVX2(p []byte, prev *[32]byte) (bad bool)
// Validates p's whole 32-byte blocks as the continuation of the block
// *prev, and stores its last block in *prev. bad reports an invalid
// sequence. A sequence the last block leaves unfinished is found by the
// next call, whose first block does not continue it (validUTF8 ends with
// a block of zeros).
TEXT ·utf8BlocksAVX2(SB), NOSPLIT, $0-33
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	ANDQ $-32, CX
	ADDQ SI, CX
	MOVQ prev+24(FP), DI
	MOVL    $0x0f, AX // the SSE moves first (see indexSpecialAVX2)
	MOVQ    AX, X12
	MOVL    $0x60, AX // 0xe0 - 0x80
	MOVQ    AX, X7
	MOVL    $0x70, AX // 0xf0 - 0x80
	MOVQ    AX, X6
	MOVL    $0x80, AX
	MOVQ    AX, X5
	VPBROADCASTB X12, Y12
	VPBROADCASTB X7, Y7
	VPBROADCASTB X6, Y6
	VPBROADCASTB X5, Y5
	VMOVDQU (DI), Y14       // the previous block
	VMOVDQU utf8T1<>(SB), Y11
	VMOVDQU utf8T2<>(SB), Y10
	VMOVDQU utf8T3<>(SB), Y9
	VMOVDQU utf8Max<>(SB), Y8
	VPSUBUSB Y8, Y14, Y13   // its unfinished sequence, if any
	VPXOR   Y15, Y15, Y15   // errors

	// In a document of 64 KiB or more, four blocks a step while there
	// are: when all are ASCII, one test; else each block runs the check,
	// ASCII or not, with no branch that depends on the text (prose with a
	// non-ASCII word every few dozen bytes mispredicted a branch per
	// block; the 1.1 MB benchmark card's check took 47% less time). A
	// shorter document goes a block at a time: on the 2 and 10 KB
	// benchmark cards, parsed again and again so that the branch is
	// predicted, that measured 20-25% faster.
	MOVQ    CX, AX
	SUBQ    SI, AX
	CMPQ    AX, $65536
	JLT     single

block:
	LEAQ    128(SI), AX
	CMPQ    AX, CX
	JHI     single
	VMOVDQU (SI), Y0
	VPOR    32(SI), Y0, Y1
	VPOR    64(SI), Y1, Y1
	VPOR    96(SI), Y1, Y1
	VPMOVMSKB Y1, AX
	TESTL   AX, AX
	JNZ     four
	VPOR    Y13, Y15, Y15   // ASCII: only an unfinished sequence before it is wrong
	VPXOR   Y13, Y13, Y13
	VMOVDQU 96(SI), Y14
	ADDQ    $128, SI
	JMP     block

four:
	MOVL $4, DX

multi:
	VMOVDQU (SI), Y0
	UTF8_BLOCK
	DECL       DX
	JNZ        multi
	JMP        block

single:
	CMPQ SI, CX
	JAE  end
	VMOVDQU (SI), Y0
	VPMOVMSKB Y0, AX
	TESTL   AX, AX
	JNZ     one
	VPOR    Y13, Y15, Y15   // ASCII: only an unfinished sequence before it is wrong
	VPXOR   Y13, Y13, Y13
	VMOVDQU Y0, Y14
	ADDQ    $32, SI
	JMP     single

one:
	UTF8_BLOCK
	JMP single

end:
	VMOVDQU Y14, (DI)
	VPTEST  Y15, Y15
	SETNE   bad+32(FP)
	VZEROUPPER
	RET

// func gatherAVX2(out, src []byte, ops []gatherOp)
// Makes the copies ops (see gatherOp) from src to out, in order; out is
// exactly as long as their output. A copy moves 32 bytes a step, and its
// last step may write past its end into what the next copies write, or
// read past it within src; near the end of out or src it moves bytes.
TEXT ·gatherAVX2(SB), NOSPLIT, $0-72
	MOVQ out_base+0(FP), DI
	MOVQ out_len+8(FP), R11
	ADDQ DI, R11 // end of out
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), R12
	ADDQ SI, R12 // end of src
	MOVQ ops_base+48(FP), R9
	MOVQ ops_len+56(FP), CX
	SHLQ $3, CX
	ADDQ R9, CX // end of ops

op:
	CMPQ R9, CX
	JAE  done
	MOVL (R9), AX  // start, with the comma bit
	MOVL 4(R9), BX // end
	ADDQ $8, R9
	BTRL $31, AX
	JCC  copy
	MOVB $0x2c, (DI) // ','
	INCQ DI

copy:
	SUBQ AX, BX // length
	ADDQ SI, AX // from

steps:
	CMPQ BX, $32
	JB   last
	VMOVDQU (AX), Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, AX
	ADDQ $32, DI
	SUBQ $32, BX
	JMP  steps

last:
	TESTQ BX, BX
	JZ    op
	LEAQ  32(DI), DX
	CMPQ  DX, R11
	JA    bytes
	LEAQ  32(AX), DX
	CMPQ  DX, R12
	JA    bytes
	VMOVDQU (AX), Y0
	VMOVDQU Y0, (DI)
	ADDQ BX, DI
	JMP  op

bytes:
	MOVB (AX), DX
	MOVB DX, (DI)
	INCQ AX
	INCQ DI
	DECQ BX
	JNZ  bytes
	JMP  op

done:
	VZEROUPPER
	RET

// func jsonBlocksAVX2(p []byte, out []jsonBlock) int
// Fills out[k] with the masks of block k of p (64 bytes, bit j for byte
// j): quotes, backslashes, '{' or '[', '}' or ']', and ','; as many
// blocks as p holds whole and out has room for. Returns that count.
TEXT ·jsonBlocksAVX2(SB), NOSPLIT, $0-56
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	SHRQ $6, CX
	MOVQ out_base+24(FP), DI
	MOVQ out_len+32(FP), AX
	CMPQ AX, CX
	CMOVQLT AX, CX
	MOVQ CX, ret+48(FP)
	MOVL $0x22, AX // the SSE moves first (see indexSpecialAVX2)
	MOVQ AX, X10
	MOVL $0x5c, AX
	MOVQ AX, X11
	MOVL $0x20, AX
	MOVQ AX, X12
	MOVL $0x7b, AX
	MOVQ AX, X13
	MOVL $0x7d, AX
	MOVQ AX, X14
	MOVL $0x2c, AX
	MOVQ AX, X15
	VPBROADCASTB X10, Y10 // '"'
	VPBROADCASTB X11, Y11 // '\\'
	VPBROADCASTB X12, Y12 // 0x20: '[' | 0x20 is '{', ']' | 0x20 is '}'
	VPBROADCASTB X13, Y13 // '{'
	VPBROADCASTB X14, Y14 // '}'
	VPBROADCASTB X15, Y15 // ','

block:
	TESTQ CX, CX
	JZ    done
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VPOR    Y0, Y12, Y2
	VPOR    Y1, Y12, Y3

	VPCMPEQB  Y0, Y10, Y4
	VPMOVMSKB Y4, AX
	VPCMPEQB  Y1, Y10, Y4
	VPMOVMSKB Y4, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, 0(DI)

	VPCMPEQB  Y0, Y11, Y4
	VPMOVMSKB Y4, AX
	VPCMPEQB  Y1, Y11, Y4
	VPMOVMSKB Y4, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, 8(DI)

	VPCMPEQB  Y2, Y13, Y4
	VPMOVMSKB Y4, AX
	VPCMPEQB  Y3, Y13, Y4
	VPMOVMSKB Y4, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, 16(DI)

	VPCMPEQB  Y2, Y14, Y4
	VPMOVMSKB Y4, AX
	VPCMPEQB  Y3, Y14, Y4
	VPMOVMSKB Y4, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, 24(DI)

	VPCMPEQB  Y0, Y15, Y4
	VPMOVMSKB Y4, AX
	VPCMPEQB  Y1, Y15, Y4
	VPMOVMSKB Y4, DX
	SHLQ      $32, DX
	ORQ       DX, AX
	MOVQ      AX, 32(DI)

	ADDQ $64, SI
	ADDQ $40, DI
	DECQ CX
	JMP  block

done:
	VZEROUPPER
	RET

// bytes64 holds 64 copies each of '"', '\\', 0x1f and 0x0f, for the
// AVX-512 kernels.
DATA bytes64<>+0(SB)/8, $0x2222222222222222
DATA bytes64<>+8(SB)/8, $0x2222222222222222
DATA bytes64<>+16(SB)/8, $0x2222222222222222
DATA bytes64<>+24(SB)/8, $0x2222222222222222
DATA bytes64<>+32(SB)/8, $0x2222222222222222
DATA bytes64<>+40(SB)/8, $0x2222222222222222
DATA bytes64<>+48(SB)/8, $0x2222222222222222
DATA bytes64<>+56(SB)/8, $0x2222222222222222
DATA bytes64<>+64(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+72(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+80(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+88(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+96(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+104(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+112(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+120(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bytes64<>+128(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+136(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+144(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+152(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+160(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+168(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+176(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+184(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA bytes64<>+192(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA bytes64<>+200(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA bytes64<>+208(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA bytes64<>+216(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA bytes64<>+224(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA bytes64<>+232(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA bytes64<>+240(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA bytes64<>+248(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL bytes64<>(SB), RODATA|NOPTR, $256

// func quoteEndAVX512(p []byte) (n int, esc bool)
// quoteEndAVX2's scan with AVX-512, 64 bytes a step to the end of p: the
// compares set mask registers, and the step that reaches the end loads
// the bytes left under a mask, which fills the rest with zeros. A zero is
// a control byte, so the scan stops at the end of p at the latest, and a
// backslash at the end escapes a zero, which no short escape is: it
// stops there, as quoteEndGeneric does. n is len(p) when nothing stops it
// before.
TEXT ·quoteEndAVX512(SB), NOSPLIT, $0-33
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	MOVQ SI, DI
	ADDQ SI, CX // end
	XORL R8, R8 // esc
	XORL R9, R9 // the step starts with an escaped byte
	// Constants are loads, not broadcasts from a general register: those
	// take the shuffle port, and most scans are a step or two.
	VMOVDQU64 bytes64<>+0(SB), Z1   // '"'
	VMOVDQU64 bytes64<>+64(SB), Z2  // '\\'
	VMOVDQU64 bytes64<>+128(SB), Z3 // the largest control byte

step:
	MOVQ CX, BX
	SUBQ SI, BX
	CMPQ BX, $64
	JB   last
	VMOVDQU64 (SI), Z4

look:
	VPCMPEQB Z1, Z4, K1    // '"'
	VPCMPEQB Z2, Z4, K2    // '\\'
	VPCMPUB  $2, Z3, Z4, K3 // control: x <= 0x1f
	KORQ     K1, K2, K4
	KORQ     K3, K4, K4
	KORTESTQ K4, K4
	JNZ      found
	TESTQ    R9, R9
	JNZ      found
	ADDQ     $64, SI
	JMP      step

last:
	MOVQ  $-1, AX
	BZHIQ BX, AX, AX
	KMOVQ AX, K5
	VMOVDQU8.Z (SI), K5, Z4
	JMP   look

found:
	KMOVQ K1, R10 // quotes
	KMOVQ K2, R11 // backslashes
	KMOVQ K3, R12 // controls
	MOVQ  R11, AX
	ORQ   R9, AX
	JNZ   escapes
	ORQ   R12, R10
	BSFQ  R10, AX // a '"' or control byte
	ADDQ  AX, SI
	JMP   stop512

escapes:
	// The second bytes of short escapes: their classes by high nibble
	// and by low nibble share a bit (see escHigh).
	VMOVDQU64 bytes64<>+192(SB), Z10 // low nibble
	VBROADCASTI32X4 escHigh<>(SB), Z11
	VBROADCASTI32X4 escLow<>(SB), Z12
	VPSRLW   $4, Z4, Z6
	VPANDD   Z10, Z6, Z6
	VPSHUFB  Z6, Z11, Z6
	VPANDD   Z10, Z4, Z7
	VPSHUFB  Z7, Z12, Z7
	VPTESTMB Z6, Z7, K6
	KMOVQ    K6, R13
	NOTQ     R13 // not a short escape's second byte
	// The escaped bytes, as in quoteEndAVX2; R9 is 0 or 1. Most steps
	// have no backslash after a backslash: each escapes the byte after
	// it, and the carry of the addition below is not needed.
	MOVQ     R9, AX
	NOTQ     AX
	ANDQ     AX, R11
	LEAQ     (R9)(R11*2), BX // follows a backslash
	TESTQ    BX, R11
	JNZ      runs
	MOVQ     R11, R9
	SHRQ     $63, R9         // the next step starts with an escaped byte
	MOVQ     BX, DX          // escaped bytes
	JMP      escaped

runs:
	MOVQ     BX, DX
	NOTQ     DX
	ANDQ     R11, DX
	MOVQ     $0xaaaaaaaaaaaaaaaa, AX
	ANDQ     AX, DX          // runs that start at an odd byte
	XORL     R9, R9
	ADDQ     R11, DX         // carried through the runs
	SETCS    R9B             // the next step starts with an escaped byte
	ADDQ     DX, DX
	NOTQ     AX
	XORQ     AX, DX
	ANDQ     BX, DX          // escaped bytes

escaped:
	ANDQ     DX, R13         // escaped bytes that no short escape is
	TESTQ    $1, R13
	JNZ      before          // the step before ended with a wrong escape's backslash
	SHRQ     $1, R13         // the backslashes of wrong escapes
	MOVQ     DX, AX
	NOTQ     AX
	ANDQ     AX, R10         // quotes not escaped
	ORQ      R12, R10
	ORQ      R13, R10        // the stops
	JZ       on
	BSFQ     R10, AX
	ADDQ     AX, SI
	// esc: an escaped byte before the stop.
	MOVQ     R10, BX
	NEGQ     BX
	ANDQ     R10, BX         // the stop's bit
	DECQ     BX              // the bits before it
	TESTQ    DX, BX
	JZ       stop512
	MOVL     $1, R8
	JMP      stop512

on:
	TESTQ DX, DX
	JZ    next
	MOVL  $1, R8

next:
	ADDQ $64, SI
	JMP  step

before:
	DECQ SI

stop512:
	SUBQ DI, SI
	MOVQ SI, n+24(FP)
	MOVB R8, esc+32(FP)
	VZEROUPPER
	RET

// func gatherAVX512(out, src []byte, ops []gatherOp)
// gatherAVX2's copies with AVX-512: 64 bytes a step, and the bytes left
// of a copy under a mask, which reads and writes nothing past them.
TEXT ·gatherAVX512(SB), NOSPLIT, $0-72
	MOVQ out_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ ops_base+48(FP), R9
	MOVQ ops_len+56(FP), CX
	SHLQ $3, CX
	ADDQ R9, CX // end of ops
	MOVQ $-1, R10

op512:
	CMPQ R9, CX
	JAE  done512
	MOVL (R9), AX  // start, with the comma bit
	MOVL 4(R9), BX // end
	ADDQ $8, R9
	BTRL $31, AX
	JCC  copy512
	MOVB $0x2c, (DI) // ','
	INCQ DI

copy512:
	SUBQ AX, BX // length
	ADDQ SI, AX // from

steps512:
	CMPQ BX, $64
	JB   last512
	VMOVDQU64 (AX), Z0
	VMOVDQU64 Z0, (DI)
	ADDQ $64, AX
	ADDQ $64, DI
	SUBQ $64, BX
	JMP  steps512

last512:
	TESTQ BX, BX
	JZ    op512
	BZHIQ BX, R10, DX
	KMOVQ DX, K1
	VMOVDQU8.Z (AX), K1, Z0
	VMOVDQU8   Z0, K1, (DI)
	ADDQ BX, DI
	JMP  op512

done512:
	VZEROUPPER
	RET

// utf8Max's 64-byte form: the largest values of the last three bytes of
// a 64-byte block that end their sequence.
DATA utf8Max512<>+0x00(SB)/8, $0xffffffffffffffff
DATA utf8Max512<>+0x08(SB)/8, $0xffffffffffffffff
DATA utf8Max512<>+0x10(SB)/8, $0xffffffffffffffff
DATA utf8Max512<>+0x18(SB)/8, $0xffffffffffffffff
DATA utf8Max512<>+0x20(SB)/8, $0xffffffffffffffff
DATA utf8Max512<>+0x28(SB)/8, $0xffffffffffffffff
DATA utf8Max512<>+0x30(SB)/8, $0xffffffffffffffff
DATA utf8Max512<>+0x38(SB)/8, $0xbfdfefffffffffff
GLOBL utf8Max512<>(SB), RODATA|NOPTR, $64

// UTF8_BLOCK512 checks the 64-byte block in Z0, which follows the block
// in Z14, as UTF8_BLOCK does (see there), and keeps it in Z14. VALIGNQ
// puts the last 16 bytes of the block before under the first 16 of Z0,
// and each lane of VPALIGNR then finds the bytes before its own. The
// first VPTERNLOGD takes the bits the three classes share, the second
// XORs in the 0x80 bits of the bytes that must be a second or third
// continuation (a byte that is one and has TWO_CONTS is right). Only
// Z0-Z15 are used, as in every kernel here: VZEROUPPER clears the upper
// bits of those alone, and dirty upper bits slow the SSE code after.
#define UTF8_BLOCK512 \
	VALIGNQ    $6, Z14, Z0, Z1 \
	VPALIGNR   $15, Z1, Z0, Z2 \
	VPALIGNR   $14, Z1, Z0, Z3 \
	VPALIGNR   $13, Z1, Z0, Z4 \
	VPSUBUSB   Z7, Z3, Z3 \
	VPSUBUSB   Z6, Z4, Z4 \
	VPORQ      Z4, Z3, Z3 \
	VPSRLW     $4, Z2, Z1 \
	VPANDD     Z12, Z1, Z1 \
	VPSHUFB    Z1, Z11, Z1 \
	VPANDD     Z12, Z2, Z2 \
	VPSHUFB    Z2, Z10, Z2 \
	VPSRLW     $4, Z0, Z4 \
	VPANDD     Z12, Z4, Z4 \
	VPSHUFB    Z4, Z9, Z4 \
	VPTERNLOGD $0x80, Z4, Z2, Z1 \
	VPTERNLOGD $0x6a, Z1, Z5, Z3 \
	VPORQ      Z3, Z15, Z15 \
	VPSUBUSB   Z8, Z0, Z13 \
	VMOVDQA64  Z0, Z14

// func validUTF8AVX512(p []byte) bool
// utf8BlocksAVX2's check of all of p with AVX-512, 64 bytes a step; the
// last step loads the bytes left under a mask, which fills the rest with
// zeros, so that a sequence they leave unfinished fails.
TEXT ·validUTF8AVX512(SB), NOSPLIT, $0-25
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	MOVQ CX, DX
	ADDQ SI, CX // end
	MOVL $0x0f, AX
	VPBROADCASTB AX, Z12
	MOVL $0x60, AX // 0xe0 - 0x80
	VPBROADCASTB AX, Z7
	MOVL $0x70, AX // 0xf0 - 0x80
	VPBROADCASTB AX, Z6
	MOVL $0x80, AX
	VPBROADCASTB AX, Z5
	VBROADCASTI32X4 utf8T1<>(SB), Z11
	VBROADCASTI32X4 utf8T2<>(SB), Z10
	VBROADCASTI32X4 utf8T3<>(SB), Z9
	VMOVDQU64 utf8Max512<>(SB), Z8
	VPXORQ    Z14, Z14, Z14 // the block before
	VPXORQ    Z13, Z13, Z13 // its unfinished sequence, if any
	VPXORQ    Z15, Z15, Z15 // errors

	// Four blocks a step in a document of 64 KiB or more, a block a
	// step in a shorter one (see utf8BlocksAVX2).
	CMPQ DX, $65536
	JLT  single

four:
	LEAQ 128(SI), AX
	CMPQ AX, CX
	JHI  single
	VMOVDQU64 (SI), Z0
	VPORQ     64(SI), Z0, Z1
	VPMOVB2M  Z1, K1
	KORTESTQ  K1, K1
	JNZ       each
	VPORQ     Z13, Z15, Z15 // ASCII: only an unfinished sequence before it is wrong
	VPXORQ    Z13, Z13, Z13
	VMOVDQU64 64(SI), Z14
	ADDQ      $128, SI
	JMP       four

each:
	UTF8_BLOCK512
	VMOVDQU64 64(SI), Z0
	UTF8_BLOCK512
	ADDQ $128, SI
	JMP  four

single:
	MOVQ CX, BX
	SUBQ SI, BX
	CMPQ BX, $64
	JB   last
	VMOVDQU64 (SI), Z0
	ADDQ $64, SI

check:
	VPMOVB2M Z0, K1
	KORTESTQ K1, K1
	JNZ      one
	VPORQ    Z13, Z15, Z15 // ASCII: only an unfinished sequence before it is wrong
	VPXORQ   Z13, Z13, Z13
	VMOVDQA64 Z0, Z14
	JMP      single

one:
	UTF8_BLOCK512
	JMP single

last:
	TESTQ BX, BX
	JZ    end
	MOVQ  $-1, AX
	BZHIQ BX, AX, AX
	KMOVQ AX, K1
	VMOVDQU8.Z (SI), K1, Z0
	MOVQ  CX, SI // the next step finds no bytes left
	JMP   check

end:
	VPORQ    Z13, Z15, Z15
	VPTESTMQ Z15, Z15, K1
	KORTESTQ K1, K1
	SETEQ    ret+24(FP)
	VZEROUPPER
	RET
