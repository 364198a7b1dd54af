;; YUV 4:2:0 to packed RGB, sixteen pixels of two rows at a time, with WebAssembly SIMD.
;; The arithmetic is yuv-to-rgb.ts's, lane for lane: 32-bit integers in 16.16 fixed point,
;; (luma * lumaScale + chroma term + bias) >> 16, then clamped to 0..255 (here by the
;; saturating narrowing of 32-bit lanes to 16 and of 16-bit lanes to unsigned 8), so the
;; bytes are the very same. Written as one function with no calls: V8 (Node 20) does not
;; inline WebAssembly calls, and passing the vectors to helpers made it three times as slow.
;; yuv-to-rgb.ts copies a frame in, calls $convert for the columns
;; that make whole groups of sixteen, copies the RGB out and does the rest itself.
(module
  (memory (export "memory") 1)

  ;; Rows [0, $rows) ($rows even) and columns [0, $columns) ($columns a multiple of 16) of
  ;; a frame whose planes start at $y, $u and $v, into packed RGB at $out. The coefficients
  ;; and bias are yuv-to-rgb.ts's.
  (func (export "convert")
    (param $y i32) (param $u i32) (param $v i32) (param $out i32)
    (param $width i32) (param $rows i32) (param $columns i32) (param $chromaWidth i32)
    (param $lumaScale i32) (param $bias i32) (param $crToR i32) (param $cbToG i32) (param $crToG i32) (param $cbToB i32)
    (local $row i32) (local $column i32) (local $chroma i32) (local $upper i32) (local $outUpper i32)
    (local $scale v128) (local $biasLanes v128) (local $minus128 v128)
    (local $cu v128) (local $cv v128)
    (local $u0 v128) (local $u1 v128) (local $u2 v128) (local $u3 v128)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $r0 v128) (local $r1 v128) (local $r2 v128) (local $r3 v128)
    (local $g0 v128) (local $g1 v128) (local $g2 v128) (local $g3 v128)
    (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local $kr v128) (local $kgu v128) (local $kgv v128) (local $kb v128)
    (local $luma i32) (local $dst i32) (local $second i32)
    (local $yBytes v128) (local $y0 v128) (local $y1 v128) (local $y2 v128) (local $y3 v128)
    (local $red v128) (local $green v128) (local $blue v128) (local $redGreen v128)
    (local.set $scale (i32x4.splat (local.get $lumaScale)))
    (local.set $biasLanes (i32x4.splat (local.get $bias)))
    (local.set $minus128 (i32x4.splat (i32.const -128)))
    (local.set $kr (i32x4.splat (local.get $crToR)))
    (local.set $kgu (i32x4.splat (local.get $cbToG)))
    (local.set $kgv (i32x4.splat (local.get $crToG)))
    (local.set $kb (i32x4.splat (local.get $cbToB)))
    (block $rowsDone
      (loop $rowPairs
        (br_if $rowsDone (i32.ge_u (local.get $row) (local.get $rows)))
        (local.set $upper (i32.add (local.get $y) (i32.mul (local.get $row) (local.get $width))))
        (local.set $outUpper (i32.add (local.get $out) (i32.mul (i32.mul (local.get $row) (local.get $width)) (i32.const 3))))
        (local.set $chroma (i32.mul (i32.shr_u (local.get $row) (i32.const 1)) (local.get $chromaWidth)))
        (local.set $column (i32.const 0))
        (block $columnsDone
          (loop $groups
            (br_if $columnsDone (i32.ge_u (local.get $column) (local.get $columns)))
            ;; Eight chroma samples, each spread over two pixels of both rows.
            (local.set $cu (i8x16.shuffle 0 0 1 1 2 2 3 3 4 4 5 5 6 6 7 7
              (v128.load64_zero (i32.add (local.get $u) (i32.add (local.get $chroma) (i32.shr_u (local.get $column) (i32.const 1)))))
              (v128.const i32x4 0 0 0 0)))
            (local.set $cv (i8x16.shuffle 0 0 1 1 2 2 3 3 4 4 5 5 6 6 7 7
              (v128.load64_zero (i32.add (local.get $v) (i32.add (local.get $chroma) (i32.shr_u (local.get $column) (i32.const 1)))))
              (v128.const i32x4 0 0 0 0)))
            (local.set $u0 (i32x4.add (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (local.get $cu))) (local.get $minus128)))
            (local.set $u1 (i32x4.add (i32x4.extend_high_i16x8_u (i16x8.extend_low_i8x16_u (local.get $cu))) (local.get $minus128)))
            (local.set $u2 (i32x4.add (i32x4.extend_low_i16x8_u (i16x8.extend_high_i8x16_u (local.get $cu))) (local.get $minus128)))
            (local.set $u3 (i32x4.add (i32x4.extend_high_i16x8_u (i16x8.extend_high_i8x16_u (local.get $cu))) (local.get $minus128)))
            (local.set $v0 (i32x4.add (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (local.get $cv))) (local.get $minus128)))
            (local.set $v1 (i32x4.add (i32x4.extend_high_i16x8_u (i16x8.extend_low_i8x16_u (local.get $cv))) (local.get $minus128)))
            (local.set $v2 (i32x4.add (i32x4.extend_low_i16x8_u (i16x8.extend_high_i8x16_u (local.get $cv))) (local.get $minus128)))
            (local.set $v3 (i32x4.add (i32x4.extend_high_i16x8_u (i16x8.extend_high_i8x16_u (local.get $cv))) (local.get $minus128)))
            (local.set $r0 (i32x4.add (i32x4.mul (local.get $kr) (local.get $v0)) (local.get $biasLanes)))
            (local.set $r1 (i32x4.add (i32x4.mul (local.get $kr) (local.get $v1)) (local.get $biasLanes)))
            (local.set $r2 (i32x4.add (i32x4.mul (local.get $kr) (local.get $v2)) (local.get $biasLanes)))
            (local.set $r3 (i32x4.add (i32x4.mul (local.get $kr) (local.get $v3)) (local.get $biasLanes)))
            (local.set $g0 (i32x4.add (i32x4.add (i32x4.mul (local.get $kgu) (local.get $u0)) (i32x4.mul (local.get $kgv) (local.get $v0))) (local.get $biasLanes)))
            (local.set $g1 (i32x4.add (i32x4.add (i32x4.mul (local.get $kgu) (local.get $u1)) (i32x4.mul (local.get $kgv) (local.get $v1))) (local.get $biasLanes)))
            (local.set $g2 (i32x4.add (i32x4.add (i32x4.mul (local.get $kgu) (local.get $u2)) (i32x4.mul (local.get $kgv) (local.get $v2))) (local.get $biasLanes)))
            (local.set $g3 (i32x4.add (i32x4.add (i32x4.mul (local.get $kgu) (local.get $u3)) (i32x4.mul (local.get $kgv) (local.get $v3))) (local.get $biasLanes)))
            (local.set $b0 (i32x4.add (i32x4.mul (local.get $kb) (local.get $u0)) (local.get $biasLanes)))
            (local.set $b1 (i32x4.add (i32x4.mul (local.get $kb) (local.get $u1)) (local.get $biasLanes)))
            (local.set $b2 (i32x4.add (i32x4.mul (local.get $kb) (local.get $u2)) (local.get $biasLanes)))
            (local.set $b3 (i32x4.add (i32x4.mul (local.get $kb) (local.get $u3)) (local.get $biasLanes)))
            ;; The two rows, upper then lower, share the chroma terms.
            (local.set $luma (i32.add (local.get $upper) (local.get $column)))
            (local.set $dst (i32.add (local.get $outUpper) (i32.mul (local.get $column) (i32.const 3))))
            (local.set $second (i32.const 0))
            (loop $twoRows
              (local.set $yBytes (v128.load (local.get $luma)))
              (local.set $y0 (i32x4.mul (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (local.get $yBytes))) (local.get $scale)))
              (local.set $y1 (i32x4.mul (i32x4.extend_high_i16x8_u (i16x8.extend_low_i8x16_u (local.get $yBytes))) (local.get $scale)))
              (local.set $y2 (i32x4.mul (i32x4.extend_low_i16x8_u (i16x8.extend_high_i8x16_u (local.get $yBytes))) (local.get $scale)))
              (local.set $y3 (i32x4.mul (i32x4.extend_high_i16x8_u (i16x8.extend_high_i8x16_u (local.get $yBytes))) (local.get $scale)))
              ;; Each channel: (luma + term) >> 16, clamped to bytes by the saturating narrowings.
              (local.set $red (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_s
                  (i32x4.shr_s (i32x4.add (local.get $y0) (local.get $r0)) (i32.const 16))
                  (i32x4.shr_s (i32x4.add (local.get $y1) (local.get $r1)) (i32.const 16)))
                (i16x8.narrow_i32x4_s
                  (i32x4.shr_s (i32x4.add (local.get $y2) (local.get $r2)) (i32.const 16))
                  (i32x4.shr_s (i32x4.add (local.get $y3) (local.get $r3)) (i32.const 16)))))
              (local.set $green (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_s
                  (i32x4.shr_s (i32x4.add (local.get $y0) (local.get $g0)) (i32.const 16))
                  (i32x4.shr_s (i32x4.add (local.get $y1) (local.get $g1)) (i32.const 16)))
                (i16x8.narrow_i32x4_s
                  (i32x4.shr_s (i32x4.add (local.get $y2) (local.get $g2)) (i32.const 16))
                  (i32x4.shr_s (i32x4.add (local.get $y3) (local.get $g3)) (i32.const 16)))))
              (local.set $blue (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_s
                  (i32x4.shr_s (i32x4.add (local.get $y0) (local.get $b0)) (i32.const 16))
                  (i32x4.shr_s (i32x4.add (local.get $y1) (local.get $b1)) (i32.const 16)))
                (i16x8.narrow_i32x4_s
                  (i32x4.shr_s (i32x4.add (local.get $y2) (local.get $b2)) (i32.const 16))
                  (i32x4.shr_s (i32x4.add (local.get $y3) (local.get $b3)) (i32.const 16)))))
              ;; Interleaved: byte n of the 48 is channel n % 3 of pixel n / 3. Red and green go
              ;; in first (blue's places hold anything), then blue.
              (local.set $redGreen (i8x16.shuffle 0 16 0 1 17 0 2 18 0 3 19 0 4 20 0 5 (local.get $red) (local.get $green)))
              (v128.store offset=0 (local.get $dst) (i8x16.shuffle 0 1 16 3 4 17 6 7 18 9 10 19 12 13 20 15 (local.get $redGreen) (local.get $blue)))
              (local.set $redGreen (i8x16.shuffle 21 0 6 22 0 7 23 0 8 24 0 9 25 0 10 26 (local.get $red) (local.get $green)))
              (v128.store offset=16 (local.get $dst) (i8x16.shuffle 0 21 2 3 22 5 6 23 8 9 24 11 12 25 14 15 (local.get $redGreen) (local.get $blue)))
              (local.set $redGreen (i8x16.shuffle 0 11 27 0 12 28 0 13 29 0 14 30 0 15 31 0 (local.get $red) (local.get $green)))
              (v128.store offset=32 (local.get $dst) (i8x16.shuffle 26 1 2 27 4 5 28 7 8 29 10 11 30 13 14 31 (local.get $redGreen) (local.get $blue)))
              (local.set $luma (i32.add (local.get $luma) (local.get $width)))
              (local.set $dst (i32.add (local.get $dst) (i32.mul (local.get $width) (i32.const 3))))
              (local.set $second (i32.add (local.get $second) (i32.const 1)))
              (br_if $twoRows (i32.lt_u (local.get $second) (i32.const 2))))
            (local.set $column (i32.add (local.get $column) (i32.const 16)))
            (br $groups)))
        (local.set $row (i32.add (local.get $row) (i32.const 2)))
        (br $rowPairs))))
)
