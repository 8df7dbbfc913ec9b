; A compile unit whose imports list holds a file, not imported entities (invalid IR; written with
; llvm-as -disable-verify): the bitcode check refuses it, since LLVM's reader casts each import to
; an imported entity unchecked. Regenerate: llvm-as-22 -disable-verify cu_imports.ll -o cu_imports.bc
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_Rust, file: !1, producer: "rustc", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug, imports: !2)
!1 = !DIFile(filename: "lib.rs", directory: "/src")
!2 = !{!1}
!3 = !{i32 2, !"Debug Info Version", i32 3}
