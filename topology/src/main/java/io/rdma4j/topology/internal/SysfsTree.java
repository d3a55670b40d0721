package io.rdma4j.topology.internal;

import io.rdma4j.topology.TopologyException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A filesystem root holding {@code sys/} (the live machine or a captured tree) and how to read it: every file may be
 * missing or unreadable and reads as null or empty, and symbolic links resolve only inside the root.
 */
final class SysfsTree {
    final Path realRoot;

    SysfsTree(Path root) {
        try {
            this.realRoot = root.toRealPath();
        } catch (IOException e) {
            throw new TopologyException(
                    "cannot read the filesystem root " + root + ": " + e.getMessage()
                            + " (pass a folder that holds sys/, e.g. an unpacked hwloc-gather-topology capture)",
                    e);
        }
    }

    /** @return the file's text trimmed, or null when it is missing or unreadable */
    static String read(Path p) {
        try {
            if (!Files.isRegularFile(p)) {
                return null;
            }
            return Files.readString(p, StandardCharsets.ISO_8859_1).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** @return the entries of {@code dir} sorted, empty when it is missing or unreadable */
    static List<Path> list(Path dir) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                out.add(p);
            }
        } catch (IOException | RuntimeException e) {
            // an unreadable directory contributes nothing
        }
        out.sort(null);
        return out;
    }

    /**
     * Resolves symbolic links and returns the path only when it stays inside the root. Sysfs links are relative, go up
     * first and then down through real directories ({@code ../../../devices/pci0000:80/...}), so one readlink and a
     * lexical join give the real path; {@code toRealPath} (a readlink per component) is the fallback for anything else.
     * {@code p}'s parent must itself be a real path, as every caller's is.
     */
    Path real(Path p) {
        try {
            Path cur = p;
            for (int depth = 0; depth < 8; depth++) {
                if (!Files.isSymbolicLink(cur)) {
                    return cur.startsWith(realRoot) && Files.exists(cur, LinkOption.NOFOLLOW_LINKS) ? cur : null;
                }
                Path target = Files.readSymbolicLink(cur);
                if (target.isAbsolute() || !upThenDown(target) || cur.getParent() == null) {
                    break;
                }
                cur = cur.getParent().resolve(target).normalize();
            }
            Path r = p.toRealPath();
            return r.startsWith(realRoot) ? r : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** True when {@code ..} appears only as a leading run: joining lexically is then exact. */
    private static boolean upThenDown(Path target) {
        boolean down = false;
        for (Path part : target) {
            String n = part.toString();
            if (n.equals("..")) {
                if (down) {
                    return false;
                }
            } else if (!n.equals(".")) {
                down = true;
            }
        }
        return true;
    }

    /** The target of a link by its text, without touching the target (which may be missing). */
    Path lexical(Path link) {
        try {
            Path t = Files.readSymbolicLink(link);
            Path abs = t.isAbsolute()
                    ? realRoot.resolve(t.toString().substring(1))
                    : link.getParent().resolve(t);
            return abs.normalize();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** @return {@code sys/rel} under the root */
    Path sys(String rel) {
        return realRoot.resolve("sys").resolve(rel);
    }

    static int parseInt(String s, int dflt) {
        if (s == null) {
            return dflt;
        }
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return dflt;
        }
    }
}
