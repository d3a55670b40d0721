package io.rdma4j.topology.internal;

import io.rdma4j.topology.TopologyException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.w3c.dom.Element;

/** Reads a vendor topology file, NCCL's ({@code <system>}) or hwloc's ({@code <topology>}). */
public final class TopologyFiles {
    private TopologyFiles() {}

    public static Model read(Path file) {
        if (!Files.isRegularFile(file)) {
            throw new TopologyException("topology file " + file + " does not exist or is not a file");
        }
        Element root = Xml.parse(file).getDocumentElement();
        return switch (root.getTagName()) {
            case "system" -> NcclXmlReader.read(file, root);
            case "topology" -> HwlocXmlReader.read(file, root);
            default ->
                throw new TopologyException("topology file " + file + " has root element <" + root.getTagName()
                        + ">: expected NCCL's <system> (NCCL_TOPO_FILE format) or hwloc's <topology>");
        };
    }
}
