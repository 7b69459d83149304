// Role: test helper validating a results.json against results.schema.json (networknt validator).
// Threading: stateless; each call builds its own schema instance.
package dev.weir.nexmark.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** Validates results documents against the schema shipped in the driver jar. */
final class SchemaCheck {
  private SchemaCheck() {}

  /** Validation messages for the file (empty when valid). */
  static Set<String> errors(Path resultsJson) throws IOException {
    return errors(new ObjectMapper().readTree(resultsJson.toFile()));
  }

  static Set<String> errors(JsonNode doc) throws IOException {
    JsonSchemaFactory factory = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
    try (InputStream in = SchemaCheck.class.getResourceAsStream("/results.schema.json")) {
      JsonSchema schema = factory.getSchema(in);
      Set<ValidationMessage> msgs = schema.validate(doc);
      return msgs.stream().map(ValidationMessage::getMessage).collect(Collectors.toCollection(TreeSet::new));
    }
  }
}
