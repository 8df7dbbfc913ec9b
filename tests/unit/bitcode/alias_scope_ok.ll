; A valid alias scope (the positive control).
; Regenerate: llvm-as-22 alias_scope_ok.ll -o alias_scope_ok.bc
define float @f(ptr %p) {
  %v = load float, ptr %p, !alias.scope !0
  ret float %v
}
!0 = !{!1}
!1 = distinct !{!1, !2, !"scope"}
!2 = distinct !{!2}
