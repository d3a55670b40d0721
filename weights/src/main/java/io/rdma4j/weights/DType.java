package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;

/**
 * Element types, named as safetensors names them. Only whole-byte types: the sub-byte ones (F4, F6_E2M3, F6_E3M2) pack
 * several elements per byte, so a shard boundary could fall inside a byte.
 */
public enum DType {
    BOOL(1),
    U8(1),
    I8(1),
    F8_E4M3(1),
    F8_E5M2(1),
    F8_E8M0(1),
    I16(2),
    U16(2),
    F16(2),
    BF16(2),
    I32(4),
    U32(4),
    F32(4),
    I64(8),
    U64(8),
    F64(8),
    C64(8);

    private final int size;

    DType(int size) {
        this.size = size;
    }

    /** {@return bytes per element} */
    public int byteSize() {
        return size;
    }

    /**
     * {@return the type of a safetensors {@code dtype} string}
     *
     * @param name e.g. {@code BF16}
     * @throws InvalidArgumentException when the name is unknown or a sub-byte type
     */
    public static DType fromSafetensors(String name) {
        for (DType t : values()) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        if (name.equals("F4") || name.equals("F6_E2M3") || name.equals("F6_E3M2")) {
            throw new InvalidArgumentException(
                    "dtype " + name + " packs several elements per byte, which rdma4j-weights"
                            + " does not shard or move; convert it to a whole-byte type (U8 of packed values) first");
        }
        throw new InvalidArgumentException("unknown dtype '" + name + "'; known: BOOL, U8, I8, F8_E4M3, F8_E5M2, "
                + "F8_E8M0, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64, C64");
    }
}
