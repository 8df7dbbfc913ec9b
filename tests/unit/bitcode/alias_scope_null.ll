; An alias scope whose domain's first operand is null (invalid IR; the verifier reads it as a
; string without testing it for null). Regenerate:
; llvm-as-22 -disable-verify alias_scope_null.ll -o alias_scope_null.bc
define float @f(ptr %p) {
  %v = load float, ptr %p, !alias.scope !0
  ret float %v
}
!0 = !{!1}
!1 = distinct !{!1, !2, !"scope"}
!2 = distinct !{null}
