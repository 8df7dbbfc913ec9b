/* NVPTX codegen: an optimised LLVM module to PTX text, as LLVMTargetMachineEmitToMemoryBuffer
 * does it but without the codegen passes that do nothing for oxide's kernels, and through a pass
 * manager kept with the target machine where that is safe (docs/pipeline.md, "Codegen"); the IR
 * pipeline as LLVMRunPasses runs it, through a pass builder kept the same way. The one C++ file
 * of liboxide, because LLVM-C can neither leave a pass out of the codegen pipeline nor keep a
 * pass manager (nor print IR through a buffer). Callers see only the C functions of
 * lib/codegen.h. */
#include <cstdlib>
#include <cstring>
#include <new>

#include <llvm/ADT/DenseSet.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Pass.h>
#include <llvm/PassInfo.h>
#include <llvm/PassRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen.h"

using namespace llvm;

namespace {

/* Codegen passes left out, by their registered names. Each was measured to leave the PTX of every
 * example kernel byte for byte the same (the 9 C examples and the 12 tile examples;
 * docs/pipeline.md has the figures):
 * - consthoist, early-tailduplication, stack-slot-coloring: constants are immediates in PTX,
 *   ptxas lays out the blocks, and kernels keep no stack slots after SROA.
 * - the rest transform what oxide never emits or the legality check refuses: memcmp and libcall
 *   expansion, vector math libraries, garbage collection, Objective-C, stack protection and
 *   safe stacks, function entry instrumentation, XRay, sanitizer metadata, statepoints, and a
 *   frame layout report; together 3.6% of a vecadd compile, mostly the pass manager's
 *   scheduling of them and of the analyses they ask for. */
const char *const left_out[] = {
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

StringRef name_of(const Pass *p) {
    const PassInfo *pi = PassRegistry::getPassRegistry()->getPassInfo(p->getPassID());
    return pi ? pi->getPassArgument() : StringRef();
}

bool is_left_out(StringRef name) {
    for (const char *n : left_out)
        if (name == n)
            return true;
    return false;
}

/* The pass manager TargetMachine::addPassesToEmitFile fills, minus the passes above, all but the
 * first early-cse and, unless vectorise, the load/store vectoriser. That one exists for adjacent
 * scalar loads and stores, which imported Rust code and libdevice have; oxide's own IR spells its
 * vector accesses, and without it the PTX of every C and tile example and tests/ir module is byte
 * for byte the same on four targets at levels 0-3 and with fast-math, for 6% fewer instructions
 * of a vecadd compile (its address comparisons build scalar evolution for every pair of
 * accesses). NVPTX runs EarlyCSE three times: after straight-line strength reduction,
 * after n-ary reassociation, and after loop strength reduction, which oxide turns off. One run
 * after the straight-line passes gives the same PTX as three (measured on every C and tile
 * example and tests/ir module, four targets, levels 0-3 and fast-math), since the SelectionDAG
 * merges equal expressions within a block and MachineCSE across blocks; none at all changes the
 * TMA variant of attention_fwd. The two others were 5% of an sgemm compile. */
struct FilteredPM : legacy::PassManager {
    bool vectorise; /* keeps the load/store vectoriser (oxide__codegen) */
    bool have_cse = false;
    explicit FilteredPM(bool v) : vectorise(v) {}
    void add(Pass *p) override {
        StringRef name = name_of(p);
        bool again = name == "early-cse" && have_cse;
        have_cse |= name == "early-cse";
        if (again || is_left_out(name) || (!vectorise && name == "load-store-vectorizer")) {
            delete p; /* addPassesToEmitFile hands over ownership, as the manager may delete too */
            return;
        }
        legacy::PassManager::add(p);
    }
};

} // namespace

/* A pass manager with its output buffer (the printer holds the stream), and the functions whose
 * addresses it must not see again (below). */
struct oxide_codegen {
    explicit oxide_codegen(bool vectorise) : pm(vectorise) {}
    FilteredPM pm;
    SmallVector<char, 0> ptx;
    raw_svector_ostream os{ptx};
    DenseSet<const Function *> seen;
};

namespace {

oxide_codegen *make_codegen(TargetMachine *tm, bool vectorise) {
    oxide_codegen *cg = new (std::nothrow) oxide_codegen(vectorise);
    /* true means the target cannot emit assembly, which NVPTX always can */
    if (cg && tm->addPassesToEmitFile(cg->pm, cg->os, nullptr, CodeGenFileType::AssemblyFile)) {
        delete cg;
        return nullptr;
    }
    return cg;
}

/* Building and scheduling codegen's ~110 passes is a fifth of a small kernel's compile, so one
 * pass manager serves module after module. NVPTX's printer keeps one thing from a module: it
 * moves a shared variable that one kernel uses into that kernel, recording it in a map keyed by
 * the kernel's Function pointer that nothing clears, so a later module whose function lands at
 * the same address would get the old module's variables printed into it (measured: the process
 * ends in "Bad address space found while emitting PTX"). So the manager remembers the functions
 * of every module with shared-memory globals it ran (the only ones that can be keys of that map),
 * and a module with a function at one of those addresses gets a fresh manager, which is kept
 * from then on (its map and set empty: a manager for that compile alone left the set growing, and
 * reduce then paid for building one in 31 compiles of 101, not 8). At SEEN_MAX remembered
 * functions the manager is made afresh as well. */
enum { SEEN_MAX = 4096 };

bool has_shared(const Module &m) {
    for (const GlobalVariable &g : m.globals())
        if (g.getAddressSpace() == 3)
            return true;
    return false;
}

bool reusable_for(const oxide_codegen *cg, const Module &m) {
    for (const Function &f : m)
        if (!f.isDeclaration() && cg->seen.contains(&f))
            return false;
    return true;
}

} // namespace

extern "C" char *oxide__codegen(LLVMTargetMachineRef tmr, oxide_codegen **kept, LLVMModuleRef mr, bool vectorise,
                                size_t *len) {
    TargetMachine *tm = reinterpret_cast<TargetMachine *>(tmr);
    Module *m = reinterpret_cast<Module *>(mr);
    if (*kept && ((*kept)->seen.size() >= SEEN_MAX || !reusable_for(*kept, *m))) {
        delete *kept;
        *kept = nullptr;
    }
    if (!*kept)
        *kept = make_codegen(tm, vectorise);
    oxide_codegen *cg = *kept;
    if (!cg)
        return nullptr;
    if (has_shared(*m))
        for (const Function &f : *m)
            if (!f.isDeclaration())
                cg->seen.insert(&f);
    m->setDataLayout(tm->createDataLayout());
    cg->ptx.clear();
    cg->pm.run(*m);
    char *out = static_cast<char *>(malloc(cg->ptx.size() + 1));
    if (out) {
        memcpy(out, cg->ptx.data(), cg->ptx.size());
        out[cg->ptx.size()] = 0;
        *len = cg->ptx.size();
    }
    return out;
}

extern "C" void oxide__codegen_destroy(oxide_codegen *cg) { delete cg; }

/* The IR pipeline as LLVMRunPasses runs it, but kept: LLVMRunPasses builds a PassBuilder (which
 * names some 600 pass classes to its instrumentation), registers about 100 analyses with four
 * analysis managers and parses the pipeline text on every call, 2% of a vecadd compile. The
 * passes keep nothing from one module to the next (each run starts from its options), and the
 * analysis managers are emptied after every run, since the module's addresses are reused. Of
 * LLVMRunPasses' standard instrumentations only the one skipping optnone functions acts without
 * a command-line flag, so it is the one registered here. */
struct oxide_passes {
    PassInstrumentationCallbacks pic;
    OptNoneInstrumentation optnone{false};
    PassBuilder pb;
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    ModulePassManager mpm;
    const char *pipeline = nullptr; /* what mpm was parsed from */

    explicit oxide_passes(TargetMachine *tm) : pb(tm, PipelineTuningOptions(), std::nullopt, &pic) {
        pb.registerLoopAnalyses(lam);
        pb.registerFunctionAnalyses(fam);
        pb.registerCGSCCAnalyses(cgam);
        pb.registerModuleAnalyses(mam);
        pb.crossRegisterProxies(lam, fam, cgam, mam);
        optnone.registerCallbacks(pic);
    }
};

extern "C" char *oxide__run_pipeline(LLVMTargetMachineRef tmr, oxide_passes **kept, LLVMModuleRef mr,
                                     const char *pipeline) {
    if (!*kept)
        *kept = new (std::nothrow) oxide_passes(reinterpret_cast<TargetMachine *>(tmr));
    oxide_passes *p = *kept;
    if (!p)
        return strdup("out of memory");
    if (p->pipeline != pipeline) {
        p->mpm = ModulePassManager();
        p->pipeline = nullptr;
        if (Error e = p->pb.parsePassPipeline(p->mpm, pipeline))
            return strdup(toString(std::move(e)).c_str());
        p->pipeline = pipeline;
    }
    p->mpm.run(*reinterpret_cast<Module *>(mr), p->mam);
    p->mam.clear();
    p->cgam.clear();
    p->fam.clear();
    p->lam.clear();
    return nullptr;
}

extern "C" void oxide__passes_destroy(oxide_passes *p) { delete p; }

/* LLVMPrintModuleToString writes through an unbuffered stream, so every token crosses two
 * virtual writes and the column tracking on its own; through a buffer the same text costs 3% less
 * of an sgemm compile. */
extern "C" char *oxide__print_ir(LLVMModuleRef mr) {
    std::string s;
    {
        raw_string_ostream os(s);
        os.SetBufferSize(1 << 16);
        reinterpret_cast<Module *>(mr)->print(os, nullptr);
    }
    char *out = static_cast<char *>(malloc(s.size() + 1));
    if (out)
        memcpy(out, s.c_str(), s.size() + 1);
    return out;
}
