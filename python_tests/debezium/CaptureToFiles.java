import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.FileReader;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Runs Debezium's embedded engine with the connector settings of a properties file and writes
 * every batch it delivers as files, one per destination (topic) and batch:
 * OUT/DESTINATION/NNNNNNNNN.jsonl, one message value a line ("null" for a tombstone), each file
 * written whole then renamed into place. With a broker address, every record is also sent to
 * Kafka as a Kafka Connect worker sends it (topic = destination, the converter's key and value
 * text, a tombstone as a null value), flushed before the batch's offsets are committed.
 * Stops when OUT/STOP exists.
 * Usage: CaptureToFiles connector.properties OUT [BOOTSTRAP_SERVERS]
 */
public final class CaptureToFiles {
    private CaptureToFiles() {}

    public static void main(String[] args) throws Exception {
        Properties settings = new Properties();
        try (FileReader reader = new FileReader(args[0], StandardCharsets.UTF_8)) {
            settings.load(reader);
        }
        Path out = Paths.get(args[1]);
        Files.createDirectories(out);
        long[] delivery = {0};
        KafkaProducer<String, String> producer = args.length > 2 ? producer(args[2]) : null;
        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
            .using(settings)
            .notifying((List<ChangeEvent<String, String>> records,
                        DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer) -> {
                Map<String, StringBuilder> byDestination = new LinkedHashMap<>();
                for (ChangeEvent<String, String> record : records) {
                    String value = record.value();
                    byDestination.computeIfAbsent(record.destination(), d -> new StringBuilder())
                        .append(value == null ? "null" : value.replace("\n", " ")).append('\n');
                }
                if (producer != null) {
                    for (ChangeEvent<String, String> record : records) {
                        producer.send(new ProducerRecord<>(
                            record.destination(), record.key(), record.value()));
                    }
                    producer.flush();
                }
                delivery[0] += 1;
                for (Map.Entry<String, StringBuilder> entry : byDestination.entrySet()) {
                    write(out.resolve(entry.getKey()), delivery[0], entry.getValue().toString());
                }
                for (ChangeEvent<String, String> record : records) {
                    committer.markProcessed(record);
                }
                committer.markBatchFinished();
            })
            .using((success, message, error) -> {
                if (!success) {
                    System.err.println("capture stopped: " + message);
                    if (error != null) {
                        error.printStackTrace();
                    }
                }
            })
            .build();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        executor.execute(engine);
        Path stop = out.resolve("STOP");
        while (!Files.exists(stop) && !executor.isTerminated()) {
            Thread.sleep(100);
        }
        engine.close();
        executor.shutdown();
        executor.awaitTermination(60, TimeUnit.SECONDS);
        if (producer != null) {
            producer.close();
        }
    }

    private static KafkaProducer<String, String> producer(String bootstrapServers) {
        Properties settings = new Properties();
        settings.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        settings.put(ProducerConfig.ACKS_CONFIG, "all");
        settings.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(settings);
    }

    private static void write(Path folder, long delivery, String lines) throws InterruptedException {
        try {
            Files.createDirectories(folder);
            String name = String.format("%09d.jsonl", delivery);
            Path partial = folder.resolve("." + name);
            try (Writer writer = Files.newBufferedWriter(partial, StandardCharsets.UTF_8)) {
                writer.write(lines);
            }
            Files.move(partial, folder.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException error) {
            throw new IllegalStateException(error);
        }
    }
}
