; The same compile unit with a real imported entity: accepted (the check's positive control).
; Regenerate: llvm-as-22 cu_imports_ok.ll -o cu_imports_ok.bc
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_Rust, file: !1, producer: "rustc", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug, imports: !2)
!1 = !DIFile(filename: "lib.rs", directory: "/src")
!2 = !{!4}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !DIImportedEntity(tag: DW_TAG_imported_declaration, scope: !5, entity: !6, file: !1, line: 1)
!5 = !DINamespace(name: "m", scope: null)
!6 = !DINamespace(name: "n", scope: null)
