package io.rdma4j.perf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * An SPDK build beside the project, the C baseline of {@code bench nvme}: its {@code spdk_nvme_perf} initiator and its
 * {@code nvmf_tgt} target. The binaries are not part of the project; {@code RDMA4J_SPDK=DIR} names a build (DIR,
 * DIR/bin or DIR/build/bin holds them), e.g. SPDK v24.01 configured as {@code perf/README.md} says.
 *
 * @param perf the {@code spdk_nvme_perf} executable
 * @param target the {@code nvmf_tgt} executable, empty when the build has none
 */
record SpdkBuild(Path perf, Optional<Path> target) {
    /** {@return the build named by RDMA4J_SPDK, or empty when it is unset} */
    static Optional<SpdkBuild> fromEnvironment() {
        String dir = System.getenv("RDMA4J_SPDK");
        return dir == null || dir.isBlank() ? Optional.empty() : Optional.of(in(Path.of(dir)));
    }

    /** {@return the build in {@code dir}} @throws IllegalArgumentException when it holds no spdk_nvme_perf */
    static SpdkBuild in(Path dir) {
        for (Path bin : List.of(dir, dir.resolve("bin"), dir.resolve("build").resolve("bin"))) {
            Path perf = bin.resolve("spdk_nvme_perf");
            if (Files.isExecutable(perf)) {
                Path tgt = bin.resolve("nvmf_tgt");
                return new SpdkBuild(perf, Files.isExecutable(tgt) ? Optional.of(tgt) : Optional.empty());
            }
        }
        throw new IllegalArgumentException("RDMA4J_SPDK=" + dir
                + " holds no executable spdk_nvme_perf (nor bin/ or build/bin/spdk_nvme_perf): point it at an SPDK"
                + " build, or unset it to run without the SPDK baseline");
    }

    /** {@return the nvmf_tgt executable} @throws IllegalStateException when this build has none */
    Path requireTarget() {
        return target.orElseThrow(() -> new IllegalStateException("the SPDK build of " + perf
                + " has no nvmf_tgt beside it: build SPDK's apps (make without --disable-apps), or run a target"
                + " yourself and pass --tcp HOST:PORT --nqn NQN instead of --spdk-target"));
    }
}
