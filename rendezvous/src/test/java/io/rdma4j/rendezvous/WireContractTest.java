package io.rdma4j.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.Descriptors;
import io.rdma4j.proto.v1.DirectoryProto;
import io.rdma4j.proto.v1.HandshakeProto;
import io.rdma4j.proto.v1.TypesProto;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Guards wire compatibility of {@code rdma4j.v1}: every field, enum value and method in {@code rdma4j-v1-contract.txt}
 * (the contract as released) must still exist with the same number, name and type, or, when removed, have its number
 * and name reserved. New elements must be added to the file, so it always lists the whole contract.
 */
class WireContractTest {
    private static List<Descriptors.FileDescriptor> files() {
        return List.of(TypesProto.getDescriptor(), DirectoryProto.getDescriptor(), HandshakeProto.getDescriptor());
    }

    private static void render(Descriptors.Descriptor m, TreeSet<String> out) {
        for (Descriptors.FieldDescriptor f : m.getFields()) {
            out.add("field " + m.getFullName() + " " + f.getNumber() + " " + f.getName() + " "
                    + (f.isRepeated() ? "repeated " : "")
                    + f.toProto().getType().name()
                    + (f.getType() == Descriptors.FieldDescriptor.Type.MESSAGE
                            ? " " + f.getMessageType().getFullName()
                            : f.getType() == Descriptors.FieldDescriptor.Type.ENUM
                                    ? " " + f.getEnumType().getFullName()
                                    : ""));
        }
        for (Descriptors.EnumDescriptor e : m.getEnumTypes()) {
            render(e, out);
        }
        for (Descriptors.Descriptor nested : m.getNestedTypes()) {
            render(nested, out);
        }
    }

    private static void render(Descriptors.EnumDescriptor e, TreeSet<String> out) {
        for (Descriptors.EnumValueDescriptor v : e.getValues()) {
            out.add("enum " + e.getFullName() + " " + v.getNumber() + " " + v.getName());
        }
    }

    static TreeSet<String> current() {
        TreeSet<String> out = new TreeSet<>();
        for (Descriptors.FileDescriptor f : files()) {
            f.getMessageTypes().forEach(m -> render(m, out));
            f.getEnumTypes().forEach(e -> render(e, out));
            for (Descriptors.ServiceDescriptor s : f.getServices()) {
                for (Descriptors.MethodDescriptor md : s.getMethods()) {
                    out.add("rpc " + s.getFullName() + " " + md.getName() + " "
                            + md.getInputType().getFullName() + " " + (md.isServerStreaming() ? "stream " : "")
                            + md.getOutputType().getFullName());
                }
            }
        }
        return out;
    }

    private static Descriptors.GenericDescriptor find(String fullName) {
        for (Descriptors.FileDescriptor f : files()) {
            Descriptors.Descriptor m =
                    f.findMessageTypeByName(fullName.substring(fullName.indexOf('.', "rdma4j.".length()) + 1));
            if (m != null) {
                return m;
            }
        }
        for (Descriptors.FileDescriptor f : files()) {
            for (Descriptors.Descriptor m : f.getMessageTypes()) {
                for (Descriptors.Descriptor n : m.getNestedTypes()) {
                    if (n.getFullName().equals(fullName)) {
                        return n;
                    }
                }
                for (Descriptors.EnumDescriptor e : m.getEnumTypes()) {
                    if (e.getFullName().equals(fullName)) {
                        return e;
                    }
                }
            }
            for (Descriptors.EnumDescriptor e : f.getEnumTypes()) {
                if (e.getFullName().equals(fullName)) {
                    return e;
                }
            }
        }
        return null;
    }

    /** @return why {@code line} (no longer present as is) breaks compatibility, or null when it was removed properly */
    private static String check(String line) {
        String[] p = line.split(" ");
        switch (p[0]) {
            case "field" -> {
                if (!(find(p[1]) instanceof Descriptors.Descriptor m)) {
                    return "message " + p[1] + " was removed (release a new package version instead)";
                }
                int number = Integer.parseInt(p[2]);
                DescriptorProtos.DescriptorProto proto = m.toProto();
                boolean numberReserved = proto.getReservedRangeList().stream()
                        .anyMatch(r -> r.getStart() <= number && number < r.getEnd());
                boolean nameReserved = proto.getReservedNameList().contains(p[3]);
                if (m.findFieldByNumber(number) == null && numberReserved && nameReserved) {
                    return null;
                }
                return m.findFieldByNumber(number) == null
                        ? "field " + p[1] + "." + p[3] + " = " + number + " was removed without `reserved " + number
                                + "; reserved \"" + p[3] + "\";`"
                        : "field number " + number + " of " + p[1] + " changed name or type: was '" + line + "'";
            }
            case "enum" -> {
                if (!(find(p[1]) instanceof Descriptors.EnumDescriptor e)) {
                    return "enum " + p[1] + " was removed";
                }
                int number = Integer.parseInt(p[2]);
                DescriptorProtos.EnumDescriptorProto proto = e.toProto();
                boolean reserved = proto.getReservedRangeList().stream()
                                .anyMatch(r -> r.getStart() <= number && number <= r.getEnd())
                        && proto.getReservedNameList().contains(p[3]);
                return e.findValueByNumber(number) == null && reserved
                        ? null
                        : "enum value " + line + " was removed or renamed without reserving it";
            }
            default -> {
                return "service method changed or removed: '" + line + "'";
            }
        }
    }

    @Test
    void releasedContractStaysWireCompatible() throws IOException {
        List<String> released;
        try (InputStream in = WireContractTest.class.getResourceAsStream("/rdma4j-v1-contract.txt")) {
            assertNotNull(in, "rdma4j-v1-contract.txt is missing from the test resources");
            released = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .filter(l -> !l.isBlank() && !l.startsWith("#"))
                    .toList();
        }
        TreeSet<String> now = current();
        List<String> problems = new ArrayList<>();
        for (String line : released) {
            if (!now.contains(line)) {
                String why = check(line);
                if (why != null) {
                    problems.add(why);
                }
            }
        }
        TreeSet<String> added = new TreeSet<>(now);
        added.removeAll(released);
        if (!added.isEmpty()) {
            Path current = Path.of("target", "rdma4j-v1-contract.current.txt");
            Files.createDirectories(current.getParent());
            Files.write(current, now);
            problems.add(
                    "new contract elements are not in src/test/resources/rdma4j-v1-contract.txt (add them; the whole current listing is in "
                            + current.toAbsolutePath() + "): " + added);
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void flagsRemovedUnreservedFieldsAndRetypedFields() {
        String removed = check("field rdma4j.v1.Peer 9 nickname TYPE_STRING");
        assertNotNull(removed);
        assertEquals(true, removed.contains("reserved 9; reserved \"nickname\""), removed);
        String retyped = check("field rdma4j.v1.Peer 1 name TYPE_BYTES");
        assertNotNull(retyped);
        assertEquals(true, retyped.contains("changed name or type"), retyped);
        assertNotNull(check("enum rdma4j.v1.Backend 3 BACKEND_EFA"));
        assertNotNull(check("field rdma4j.v1.Gone 1 x TYPE_STRING"));
        assertNotNull(check("rpc rdma4j.v1.Directory Renew rdma4j.v1.HeartbeatRequest rdma4j.v1.HeartbeatResponse"));
    }
}
