/* NVPTX codegen: an optimised LLVM module to PTX text, as LLVMTargetMachineEmitToMemoryBuffer
 * does it but without the codegen passes that do nothing for oxide's kernels (docs/pipeline.md,
 * "Codegen"). The one C++ file of liboxide, because LLVM-C cannot leave a pass out of the codegen
 * pipeline. Callers see only the C function of lib/codegen.h. */
#include <cstdlib>
#include <cstring>

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Pass.h>
#include <llvm/PassInfo.h>
#include <llvm/PassRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen.h"

using namespace llvm;

namespace {

/* Codegen passes left out, by their registered names. Each was measured to leave the PTX of every
 * example kernel byte for byte the same (the 9 C examples and the 12 tile examples;
 * docs/pipeline.md has the figures):
 * - early-cse: NVPTX's codegen runs it three times (after straight-line strength reduction, after
 *   n-ary reassociation, and after the generic IR passes to clean up loop strength reduction,
 *   which oxide turns off); the IR pipeline's EarlyCSE and GVN ran just before, and instruction
 *   selection and MachineCSE merge what is left. 7.7% of an sgemm compile's instructions.
 * - consthoist, early-tailduplication, stack-slot-coloring: constants are immediates in PTX,
 *   ptxas lays out the blocks, and kernels keep no stack slots after SROA.
 * - the rest transform what oxide never emits or the legality check refuses: memcmp and libcall
 *   expansion, vector math libraries, garbage collection, Objective-C, stack protection and
 *   safe stacks, function entry instrumentation, XRay, sanitizer metadata, statepoints, and a
 *   frame layout report; together 3.6% of a vecadd compile, mostly the pass manager's
 *   scheduling of them and of the analyses they ask for. */
const char *const left_out[] = {
    "early-cse",
    "consthoist",
    "early-tailduplication",
    "stack-slot-coloring",
    "mergeicmps",
    "expand-memcmp",
    "partially-inline-libcalls",
    "replace-with-veclib",
    "gc-lowering",
    "shadow-stack-gc-lowering",
    "gc-analysis",
    "objc-arc-contract",
    "safe-stack",
    "stack-protector",
    "post-inline-ee-instrument",
    "fentry-insert",
    "xray-instrumentation",
    "machine-sanmd",
    "stack-frame-layout",
    "fixup-statepoint-caller-saved",
};

bool is_left_out(const Pass *p) {
    const PassInfo *pi = PassRegistry::getPassRegistry()->getPassInfo(p->getPassID());
    if (!pi)
        return false;
    StringRef name = pi->getPassArgument();
    for (const char *n : left_out)
        if (name == n)
            return true;
    return false;
}

/* The pass manager TargetMachine::addPassesToEmitFile fills, minus the passes above. */
struct FilteredPM : legacy::PassManager {
    void add(Pass *p) override {
        if (is_left_out(p)) {
            delete p; /* addPassesToEmitFile hands over ownership, as the manager may delete too */
            return;
        }
        legacy::PassManager::add(p);
    }
};

} // namespace

extern "C" char *oxide__codegen(LLVMTargetMachineRef tmr, LLVMModuleRef mr, size_t *len) {
    TargetMachine *tm = reinterpret_cast<TargetMachine *>(tmr);
    Module *m = reinterpret_cast<Module *>(mr);
    SmallVector<char, 0> ptx;
    raw_svector_ostream os(ptx);
    FilteredPM pm;
    m->setDataLayout(tm->createDataLayout());
    /* true means the target cannot emit assembly, which NVPTX always can */
    if (tm->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::AssemblyFile))
        return nullptr;
    pm.run(*m);
    char *out = static_cast<char *>(malloc(ptx.size() + 1));
    if (out) {
        memcpy(out, ptx.data(), ptx.size());
        out[ptx.size()] = 0;
        *len = ptx.size();
    }
    return out;
}
