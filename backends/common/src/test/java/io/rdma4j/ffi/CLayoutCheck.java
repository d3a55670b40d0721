package io.rdma4j.ffi;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Compiles a small C program with {@code sizeof}/{@code offsetof} for every struct member a binding declares, against
 * the installed headers, runs it, and compares with the Java layouts. Members are every named, non-padding member of
 * the Java layout, walked recursively (anonymous groups are transparent, as in C). Constants (enum values, macros) are
 * compared too.
 *
 * <p>Skips (JUnit assumption) when gcc or a header is missing, unless the system property
 * {@code rdma4j.require.toolchain=true} is set, as CI does, where it fails instead.
 */
public final class CLayoutCheck {
    private final List<String> includes = new ArrayList<>();
    private final Map<String, GroupLayout> structs = new LinkedHashMap<>();
    private final Map<String, List<String>> skipped = new LinkedHashMap<>();
    private final Map<String, Long> constants = new LinkedHashMap<>();
    private final List<String> libs = new ArrayList<>();

    public CLayoutCheck include(String header) {
        includes.add(header);
        return this;
    }

    /**
     * Checks {@code cType} (e.g. {@code struct fi_info}) against {@code layout}; {@code notInC} lists Java-only member
     * paths.
     */
    public CLayoutCheck struct(String cType, GroupLayout layout, String... notInC) {
        structs.put(cType, layout);
        skipped.put(cType, List.of(notInC));
        return this;
    }

    /** Checks that the C expression {@code cName} (macro or enumerator) equals {@code javaValue}. */
    public CLayoutCheck constant(String cName, long javaValue) {
        constants.put(cName, javaValue);
        return this;
    }

    /** Extra compiler arguments such as -I paths. */
    public CLayoutCheck compilerArg(String arg) {
        libs.add(arg);
        return this;
    }

    /** Runs the check; returns the list of mismatches (empty when every layout matches). */
    public List<String> run() throws IOException, InterruptedException {
        boolean required = Boolean.getBoolean("rdma4j.require.toolchain");
        Path gcc = which("gcc");
        if (gcc == null) {
            if (required) {
                throw new AssertionError(
                        "gcc is required for the layout check (rdma4j.require.toolchain=true): apt-get install gcc");
            }
            Assumptions.abort("gcc not found: layout check skipped (apt-get install gcc)");
        }
        for (String h : includes) {
            if (!headerExists(h)) {
                if (required) {
                    throw new AssertionError(
                            "header " + h + " is required for the layout check: install its -dev package");
                }
                Assumptions.abort("header " + h + " not installed: layout check skipped");
            }
        }
        StringBuilder c = new StringBuilder("#include <stddef.h>\n#include <stdio.h>\n");
        for (String h : includes) {
            c.append("#include <").append(h).append(">\n");
        }
        c.append("int main(void) {\n");
        List<String> expected = new ArrayList<>();
        for (var e : structs.entrySet()) {
            String t = e.getKey();
            c.append("  printf(\"S|")
                    .append(t)
                    .append("|%zu\\n\", sizeof(")
                    .append(t)
                    .append("));\n");
            expected.add("S|" + t + "|" + e.getValue().byteSize());
            List<String[]> members = new ArrayList<>();
            collect(e.getValue(), "", 0, members);
            for (String[] m : members) {
                if (skipped.get(t).contains(m[0])) {
                    continue;
                }
                c.append("  printf(\"O|")
                        .append(t)
                        .append('|')
                        .append(m[0])
                        .append("|%zu\\n\", offsetof(")
                        .append(t)
                        .append(", ")
                        .append(m[0])
                        .append("));\n");
                expected.add("O|" + t + "|" + m[0] + "|" + m[1]);
            }
        }
        for (var e : constants.entrySet()) {
            c.append("  printf(\"C|")
                    .append(e.getKey())
                    .append("|%lld\\n\", (long long)(")
                    .append(e.getKey())
                    .append("));\n");
            expected.add("C|" + e.getKey() + "|" + e.getValue());
        }
        c.append("  return 0;\n}\n");

        Path dir = Files.createTempDirectory("rdma4j-layout");
        Path src = dir.resolve("layout.c");
        Path exe = dir.resolve("layout");
        Files.writeString(src, c);
        List<String> cmd = new ArrayList<>(List.of(gcc.toString(), "-std=gnu11", "-o", exe.toString(), src.toString()));
        cmd.addAll(libs);
        String out = exec(cmd);
        String printed = exec(List.of(exe.toString()));
        List<String> actual = printed.lines().toList();
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < expected.size(); i++) {
            String want = expected.get(i);
            String got = i < actual.size() ? actual.get(i) : "<missing>";
            if (!want.equals(got)) {
                mismatches.add("Java " + want + " but C " + got);
            }
        }
        if (!out.isBlank() && out.contains("error")) {
            mismatches.add("gcc: " + out);
        }
        return mismatches;
    }

    /** Collects dotted member paths and their byte offsets, skipping padding; anonymous groups add no path segment. */
    private static void collect(GroupLayout g, String prefix, long base, List<String[]> out) {
        boolean union = g instanceof java.lang.foreign.UnionLayout;
        long off = 0;
        for (MemoryLayout m : g.memberLayouts()) {
            long at = base + (union ? 0 : off);
            if (!(m instanceof PaddingLayout)) {
                if (m.name().isPresent()) {
                    String path = prefix.isEmpty()
                            ? m.name().get()
                            : prefix + "." + m.name().get();
                    out.add(new String[] {path, Long.toString(at)});
                    if (m instanceof GroupLayout inner) {
                        collect(inner, path, at, out);
                    }
                } else if (m instanceof GroupLayout anon) {
                    collect(anon, prefix, at, out);
                }
            }
            off += m.byteSize();
        }
    }

    private static String exec(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] all = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", cmd) + " failed:\n" + new String(all, StandardCharsets.UTF_8));
        }
        return new String(all, StandardCharsets.UTF_8);
    }

    private static boolean headerExists(String h) {
        for (String dir : List.of(
                "/usr/include",
                "/usr/local/include",
                "/usr/include/x86_64-linux-gnu",
                "/usr/include/aarch64-linux-gnu",
                "/usr/local/cuda/include")) {
            if (Files.exists(Path.of(dir, h))) {
                return true;
            }
        }
        return false;
    }

    static Path which(String exe) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, exe);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
