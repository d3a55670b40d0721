package io.rdma4j.ffi;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds struct layouts the way a C compiler on LP64 Linux lays them out (each member at its natural alignment, tail
 * padded to the largest alignment), so a binding can quote the C declaration member for member and leave the padding
 * arithmetic to this class. Every offset is then checked against the real header by the gcc layout test.
 */
public final class Structs {
    /** {@code void *}, with no target size: use {@link #view} before dereferencing. */
    public static final AddressLayout POINTER = ValueLayout.ADDRESS;

    public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;

    private Structs() {}

    /** A C struct named {@code name} with the given members in declaration order; padding is inserted as gcc would. */
    public static StructLayout struct(String name, MemoryLayout... members) {
        List<MemoryLayout> out = new ArrayList<>();
        long offset = 0;
        long maxAlign = 1;
        int pad = 0;
        for (MemoryLayout m : members) {
            long align = m.byteAlignment();
            maxAlign = Math.max(maxAlign, align);
            long aligned = alignUp(offset, align);
            if (aligned != offset) {
                out.add(MemoryLayout.paddingLayout(aligned - offset).withName("__pad" + pad++));
            }
            out.add(m);
            offset = aligned + m.byteSize();
        }
        long end = alignUp(offset, maxAlign);
        if (end != offset) {
            out.add(MemoryLayout.paddingLayout(end - offset).withName("__pad" + pad));
        }
        StructLayout s = MemoryLayout.structLayout(out.toArray(MemoryLayout[]::new));
        return name == null ? s : s.withName(name);
    }

    /** A C union; {@code name} may be null for an anonymous union, whose members are then addressed directly. */
    public static UnionLayout union(String name, MemoryLayout... members) {
        long size = 0;
        long maxAlign = 1;
        for (MemoryLayout m : members) {
            size = Math.max(size, m.byteSize());
            maxAlign = Math.max(maxAlign, m.byteAlignment());
        }
        List<MemoryLayout> all = new ArrayList<>(List.of(members));
        long end = alignUp(size, maxAlign);
        if (end != size) {
            // a union's tail padding is expressed as a padded struct member so its size matches the C union
            all.add(MemoryLayout.structLayout(MemoryLayout.paddingLayout(end)).withByteAlignment(maxAlign));
        }
        UnionLayout u = MemoryLayout.unionLayout(all.toArray(MemoryLayout[]::new));
        return name == null ? u : u.withName(name);
    }

    /** A fixed-size C array member, {@code char name[len]} and the like. */
    public static MemoryLayout array(String name, long count, MemoryLayout element) {
        return MemoryLayout.sequenceLayout(count, element).withName(name);
    }

    /**
     * Byte offset of a member, by dotted path through named members ({@code "wr.rdma.remote_addr"}); members of
     * anonymous unions and structs are found without naming the anonymous group, as in C.
     */
    public static long offset(GroupLayout layout, String path) {
        long off = 0;
        GroupLayout current = layout;
        String[] parts = path.split("\\.");
        for (int i = 0; i < parts.length; i++) {
            long[] found = new long[1];
            MemoryLayout member = find(current, parts[i], 0, found);
            if (member == null) {
                throw new IllegalArgumentException("no member '" + parts[i] + "' in "
                        + current.name().orElse("<anonymous>") + " (path " + path + ")");
            }
            off += found[0];
            if (i < parts.length - 1) {
                if (!(member instanceof GroupLayout g)) {
                    throw new IllegalArgumentException(parts[i] + " is not a struct or union (path " + path + ")");
                }
                current = g;
            }
        }
        return off;
    }

    /** The member layout at a dotted path, as for {@link #offset}. */
    public static MemoryLayout member(GroupLayout layout, String path) {
        GroupLayout current = layout;
        MemoryLayout member = null;
        for (String part : path.split("\\.")) {
            member = find(current, part, 0, new long[1]);
            if (member == null) {
                throw new IllegalArgumentException("no member '" + part + "' in path " + path);
            }
            if (member instanceof GroupLayout g) {
                current = g;
            }
        }
        return member;
    }

    private static MemoryLayout find(GroupLayout group, String name, long base, long[] offsetOut) {
        long off = 0;
        boolean union = group instanceof UnionLayout;
        for (MemoryLayout m : group.memberLayouts()) {
            long memberOff = union ? 0 : off;
            if (m.name().isPresent() && m.name().get().equals(name)) {
                offsetOut[0] = base + memberOff;
                return m;
            }
            if (m.name().isEmpty() && m instanceof GroupLayout anon) {
                MemoryLayout inner = find(anon, name, base + memberOff, offsetOut);
                if (inner != null) {
                    return inner;
                }
            }
            off += m.byteSize();
        }
        return null;
    }

    /** A view of {@code layout.byteSize()} bytes at a native pointer, failing clearly on NULL. */
    public static MemorySegment view(MemorySegment pointer, MemoryLayout layout, String what) {
        if (pointer == null || pointer.equals(MemorySegment.NULL)) {
            throw new IllegalStateException(what + " is NULL");
        }
        return pointer.reinterpret(layout.byteSize());
    }

    /** Reads a NUL-terminated C string, or returns null for a NULL pointer. */
    public static String string(MemorySegment pointer) {
        if (pointer == null || pointer.equals(MemorySegment.NULL)) {
            return null;
        }
        return pointer.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** Reads the {@code char *} stored at {@code offset} in {@code struct}. */
    public static String stringAt(MemorySegment struct, long offset) {
        return string(struct.get(POINTER, offset));
    }

    public static long alignUp(long value, long alignment) {
        return (value + alignment - 1) & -alignment;
    }
}
