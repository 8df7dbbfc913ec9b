"""liboxide's tables: interface scalar types (oxide_scalar order), parameter kinds
(oxide_param_kind order) and the version. Generated from lib/scalars.def and VERSION by
tools/gen.py; do not edit."""
# fmt: off

VERSION = '0.1.0'
SCALARS = ('bool', 'i8', 'i16', 'i32', 'i64', 'u8', 'u16', 'u32', 'u64', 'f16', 'bf16', 'f32', 'f64', 'f8e4m3', 'f8e5m2')
SIZE = {'bool': 1, 'i8': 1, 'i16': 2, 'i32': 4, 'i64': 8, 'u8': 1, 'u16': 2, 'u32': 4, 'u64': 8, 'f16': 2, 'bf16': 2, 'f32': 4, 'f64': 8, 'f8e4m3': 1, 'f8e5m2': 1}
NUMPY = {'bool': 'bool', 'i8': 'int8', 'i16': 'int16', 'i32': 'int32', 'i64': 'int64', 'u8': 'uint8', 'u16': 'uint16', 'u32': 'uint32', 'u64': 'uint64', 'f16': 'float16', 'bf16': 'bfloat16', 'f32': 'float32', 'f64': 'float64', 'f8e4m3': 'uint8', 'f8e5m2': 'uint8'}
PARAM_KINDS = ('scalar', 'slice', 'ptr', 'bytes', 'tma_desc', 'tensor')
