; A compile unit whose imports list holds a null (invalid IR; LLVM's reader would cast it to an
; imported entity and use it). Regenerate: llvm-as-22 -disable-verify cu_imports_null.ll -o cu_imports_null.bc
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_Rust, file: !1, producer: "rustc", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug, imports: !2)
!1 = !DIFile(filename: "lib.rs", directory: "/src")
!2 = !{null}
!3 = !{i32 2, !"Debug Info Version", i32 3}
