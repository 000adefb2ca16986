//! The detector's data, apart from the code that reads it: word lists, the
//! word classes and patterns of the rule language (compiled by
//! [`super::rules`]), and phrases of scripts written without spaces. A new
//! wording of a known shape is a line here, with a case in the parent
//! module's tests.

use std::sync::OnceLock;

use super::signal::Signal;

/// A word list, space separated (one word per entry would make the
/// tables below several screens long).
#[derive(Clone, Copy)]
pub(super) struct Words(pub(super) &'static str);

impl Words {
    pub(super) fn iter(self) -> std::str::SplitWhitespace<'static> {
        self.0.split_whitespace()
    }
    pub(super) fn contains(self, w: &str) -> bool {
        self.iter().any(|x| x == w)
    }
}

/// Whether `key` is JSON Schema or MCP vocabulary; looked up for every key
/// of every tool, so from a set.
pub(super) fn known_key(key: &str) -> bool {
    static SET: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| KNOWN_KEYS.iter().collect())
        .contains(key)
}

/// Keys that are vocabulary (JSON Schema, MCP): their text is not read as
/// prose. Property names, `_meta` keys and unknown keys are.
const KNOWN_KEYS: Words = Words(
    "$schema $id $ref $anchor $dynamicRef $dynamicAnchor $vocabulary $comment $defs \
     definitions type enum const multipleOf maximum exclusiveMaximum minimum \
     exclusiveMinimum maxLength minLength pattern maxItems minItems uniqueItems \
     maxContains minContains maxProperties minProperties required dependentRequired \
     dependencies properties patternProperties additionalProperties propertyNames items \
     prefixItems additionalItems contains unevaluatedItems unevaluatedProperties allOf \
     anyOf oneOf not if then else dependentSchemas format contentEncoding \
     contentMediaType contentSchema title description default deprecated readOnly \
     writeOnly examples example nullable discriminator externalDocs xml enumNames \
     enumDescriptions markdownDescription markdownEnumDescriptions errorMessage \
     deprecationMessage id name inputSchema outputSchema annotations _meta icons \
     execution taskSupport readOnlyHint destructiveHint idempotentHint openWorldHint \
     instructions serverInfo prompts resources resourceTemplates version websiteUrl uri \
     uriTemplate mimeType arguments size",
);

/// Folded names of parameters that exist to carry free text out.
pub(super) const COVERT: Words = Words(
    "sidenote sidenotes notetoself notestoself feedback extra extras extrainfo extradata \
     additionalinfo additionalcontext context debuginfo debugdata debug internalnote \
     internalnotes hiddennote secretnote scratchpad telemetry",
);

/// Words of a parameter name that name a secret.
pub(super) const SECRET_WORDS: Words = Words(
    "ssh rsa password passwords passwd passphrase credential credentials secret secrets \
     token tokens apikey dotenv bashrc zshrc netrc npmrc pypirc cookie cookies mnemonic \
     keychain privatekey shadow",
);

/// Words of a parameter name that ask for something to be read out.
pub(super) const SOLICIT_WORDS: Words =
    Words("read reading dump cat paste exfil exfiltrate steal leak copy");

/// Words that make a long parameter name an order.
pub(super) const ORDER_WORDS: Words = Words(
    "read reading include send pass ignore always must never attach append paste forward \
     upload call exfiltrate copy dump leak please",
);

/// Verbs of a tool that changes something.
pub(super) const WRITER: Words = Words(
    "write writes overwrite overwrites create creates delete deletes remove removes drop \
     drops erase erases purge wipe destroy destroys truncate update updates edit edits \
     modify modifies insert inserts append appends replace replaces move moves rename \
     renames set sets put puts patch post posts send sends email emails mail publish \
     publishes upload uploads export exports push pushes commit commits merge merges \
     transfer transfers submit submits save saves store stores install uninstall kill \
     terminate reset clear revoke grant deploy deploys share shares forward transmit \
     tweet sms notify broadcast",
);

/// Verbs of a tool that destroys something.
pub(super) const DESTROYER: Words = Words(
    "delete deletes remove removes drop drops erase erases purge wipe destroy destroys \
     truncate overwrite overwrites reset clear kill terminate revoke uninstall",
);

/// Verbs of a tool that reaches outside: sends, publishes, uploads.
pub(super) const SENDER: Words = Words(
    "send sends email emails mail post posts publish publishes upload uploads export \
     exports share shares tweet sms notify webhook broadcast transmit forward",
);

/// First words of a name that reads (`get_update_status` reads).
pub(super) const READER: Words = Words(
    "get gets list lists read reads search searches find finds fetch fetches show shows \
     view views describe describes query check checks validate count lookup inspect \
     preview diff status log browse open",
);

/// Word classes, space separated; `@NAME` includes an earlier class.
pub(super) const CLASSES: &[(&str, &str)] = &[
    ("NEG", "not never don't dont doesn't mustn't shouldn't nor nicht nie niemals ne n' pas jamais non não nunca mai не никогда"),
    ("STATIVE", "does did doesn't didn't will would can could cannot can't it which that this tool is are was"),
    ("TELL", "mention mentioning tell reveal disclose divulge say erwähne erwähnen erwähnt sag sage sagen verrate verraten mitteilen dis dites mentionne mentionnez révèle révélez dire divulgue menzionare menzionarlo rivelare dirgli decirle decir mencionar revelar contar говори говорите скажи скажите сообщай сообщайте упоминай упоминайте рассказывай раскрывай"),
    ("TELL_ES", "digas diga menciones mencione reveles revele cuentes cuente informes avises comentes"),
    ("TELL_WEAK", "inform notify alert let warn show informiere benachrichtige informe préviens prévenez avise"),
    ("TELLING_STRONG", "telling mentioning revealing disclosing letting saying"),
    ("TELLING_WEAK", "informing notifying alerting warning"),
    ("USER", "user users human humans person anyone anybody them him her benutzer nutzer benutzerin anwender utilisateur utilisatrice usuario usuaria utente utilizador usuário пользователь пользователю пользователя пользователей"),
    ("WITHOUT", "without ohne sans sin senza sem без"),
    ("KNOW", "know notice learn realize realise suspect discover aware find"),
    ("KNOWING", "knowing noticing realizing realising seeing"),
    ("HIDE", "hide conceal hidden concealed"),
    ("CONCEAL_ADV", "secretly covertly discreetly surreptitiously stealthily heimlich secrètement secretamente segretamente тайно незаметно"),
    ("SILENT", "silently quietly"),
    ("IGNORE", "ignore ignoring disregard forget ignoriere ignorieren vergiss missachte ignora ignorar ignorez ignorer oublie oubliez olvida dimentica игнорируй игнорируйте забудь забудьте"),
    ("QUAL", "previous prior above earlier preceding original initial existing your system foregoing vorherigen vorherige vorigen bisherigen obigen précédentes précédents antérieures anteriores previas precedenti предыдущие прежние"),
    ("QUAL2", "previous prior above earlier preceding original initial existing your foregoing all any other every"),
    ("QUAL_ALL", "all any every alle allen toutes tous todas todos tutte tutti все"),
    ("INSTR", "instructions instruction prompts prompt rules guidelines directives constraints restrictions guardrails policies orders commands anweisungen anweisung regeln vorgaben befehle instrucciones reglas indicaciones directrices consignes règles istruzioni regole instruções regras инструкции инструкций указания правила"),
    ("INSTR_STRONG", "instructions instruction prompts prompt guidelines directives anweisungen instrucciones consignes istruzioni instruções инструкции инструкций указания"),
    ("WISH", "choice choices request requests instruction instructions preference preferences selection wishes input decision decisions"),
    ("TAKE", "takes take has have gets get given"),
    ("PRECEDENCE", "precedence priority"),
    ("OVERRIDEV", "overrides override supersedes supersede overrule overrules"),
    ("ADDRESSEE_STRONG", "assistant assistants ai llm llms claude gpt chatgpt copilot gemini chatbot assistent assistente asistente ассистент"),
    ("ADDRESSEE", "@ADDRESSEE_STRONG model models agent agents bot bots"),
    ("MODAL", "must should shall needs musst muss doit doivent debe deve должен"),
    ("DIRECTIVE", "do don't dont never always must you please ignore read send call include note make remember first before this only"),
    ("ROLE", "system assistant ai llm admin developer sys"),
    ("ATTN", "important attention urgent mandatory wichtig importante важно"),
    ("VERY", "very extremely super really absolutely highly vitally"),
    ("EMPH", "important crucial critical vital essential imperative"),
    ("MUST_FOREIGN", "musst müssen dois devez debes должен должна обязан"),
    ("READ", "read reading open cat load fetch retrieve access extract grab collect gather obtain dump copy output get contents content lese lesen lis lire lee leer leggi leggere ler leia прочитай прочти читай"),
    ("COLLECT", "pass include paste attach append prepend send forward upload embed copy leak exfiltrate transmit share concatenate concat dump put submit encode bcc cc email mail sende schicke füge hänge übergib envoie mets inclus ajoute passe pasa pásalo pásala envía envia incluye adjunta añade invia includi allega aggiungi passa envie inclua anexe отправь передай вставь добавь приложи"),
    ("SEND", "send forward upload post email mail transmit deliver submit redirect route reroute report copy bcc cc change set sync push ping notify text sms message exfiltrate leak share sende schicke ändere envoie change envía envia cambia invia cambia envie altere отправь перешли измени"),
    ("MODIFY", "change replace set modify redirect rewrite alter swap override substitute add append prepend include bcc cc forward reroute route point update"),
    ("CALLV", "call invoke run execute use trigger"),
    ("ACTION", "@READ @COLLECT @SEND @MODIFY @CALLV"),
    ("USING", "using calling invoking running executing answering responding replying proceeding doing fetching continuing starting performing"),
    ("MUSTV", "must should shall needs always"),
    ("TRIG", "used invoked called executed run triggered ran"),
    ("ARGNOUN", "parameter parameters param params argument arguments arg args field fields property sidenote"),
    ("ARGNOUN2", "recipient recipients address addresses argument arguments parameter parameters field fields body url destination number email cc bcc subject path account amount target payload header headers query value values content contents message text"),
    ("ASKV", "ask request seek wait prompt confirm asking"),
    ("CONSENT", "confirmation confirmations permission approval approvals consent"),
    ("CARRIER_PREV", "as in into to the inside"),
    ("OBJ", "content contents output outputs result results value values text data response it its them their everything"),
    ("SECRET1", "password passwords passwd passphrase passphrases secret secrets credential credentials apikey apikeys mnemonic mnemonics cookies passwort passwörter mot contraseña contraseñas пароль пароли"),
    ("SECRET_HEAD", "api private secret access ssh auth bearer session refresh oauth github gitlab aws environment env seed recovery credit system conversation chat previous last"),
    ("SECRET_TAIL", "key keys token tokens variable variables var vars phrase card cards prompt history messages cookie cookies"),
];

/// The patterns. Elements, space separated: `CLASS`, `'word`, `#FLAG`,
/// alternatives joined with `|`, a word and flags joined with `&`; `?`
/// makes an element optional; `..N` lets up to N tokens pass before the
/// next element; a leading `!A|B` refuses a match right after A or B.
/// A pattern never crosses a clause (`.`, `;`, `!`, `?`, a blank line, a
/// new bullet).
pub(super) const PATTERNS: &[(Signal, &str)] = &[
    // concealment
    (Signal::Concealment, "!STATIVE NEG ?'ever|'even|'actually|'le|'lui|'lo|'ihm|'es|'das|'dies|'it|'this|'that TELL"),
    (Signal::Concealment, "!STATIVE NEG ..2 TELL_WEAK ..4 USER"),
    (Signal::Concealment, "TELL ..3 'nicht|'nichts|'pas|'niemals|'jamais"),
    (Signal::Concealment, "'no ?'le|'les|'lo|'se TELL_ES"),
    (Signal::Concealment, "WITHOUT ?'the|'ever|'it|'es|'le|'lo TELLING_STRONG|TELL"),
    (Signal::Concealment, "WITHOUT ?'the|'ever TELLING_WEAK ..3 USER"),
    (Signal::Concealment, "WITHOUT ?'the USER ..1 KNOWING"),
    (Signal::Concealment, "USER ..3 NEG ..3 KNOW"),
    (Signal::Concealment, "CONCEAL_ADV"),
    (Signal::Concealment, "SILENT ..1 ACTION"),
    (Signal::Concealment, "'keep ..2 'secret|'hidden|'confidential|'quiet"),
    (Signal::Concealment, "HIDE ..4 'from ..2 USER"),
    (Signal::Concealment, "'behind ..2 'back"),
    // consent
    (Signal::ConsentBypass, "WITHOUT ?'the ?USER 'asking|'confirmation|'confirming|'approval|'permission|'consent|'prompting"),
    (Signal::ConsentBypass, "!STATIVE NEG ..1 ASKV ..4 CONSENT|USER"),
    (Signal::ConsentBypass, "'no 'need 'to ASKV|'confirm"),
    (Signal::ConsentBypass, "'pre|'already|'auto|'automatically ..1 'approved|'authorized|'authorised"),
    (Signal::ConsentBypass, "'preapproved|'preauthorized|'preauthorised"),
    (Signal::ConsentBypass, "'skip|'bypass ..2 CONSENT"),
    // override
    (Signal::Override, "IGNORE ..3 QUAL ..2 INSTR"),
    (Signal::Override, "IGNORE ..1 QUAL_ALL ..1 INSTR_STRONG"),
    (Signal::Override, "IGNORE ..2 INSTR ..2 QUAL"),
    (Signal::Override, "IGNORE ..2 USER ..1 WISH"),
    (Signal::Override, "TAKE ..1 PRECEDENCE ..6 INSTR|USER"),
    (Signal::Override, "TAKE ..1 PRECEDENCE ..6 'other|'any|'all|'every ..1 'tool|'tools|'server|'servers"),
    (Signal::Override, "OVERRIDEV ..2 QUAL2 ..2 INSTR"),
    // the model addressed
    (Signal::AddressedToModel, "ADDRESSEE&#COLON ..2 DIRECTIVE"),
    (Signal::AddressedToModel, "ADDRESSEE&#COMMA ..1 DIRECTIVE"),
    (Signal::AddressedToModel, "'you&#COMMA ?'the ADDRESSEE"),
    (Signal::AddressedToModel, "'dear|'hey|'attention|'hi|'hello ?'the ADDRESSEE_STRONG"),
    (Signal::AddressedToModel, "'note 'to ?'the|'any|'all|'every ADDRESSEE"),
    (Signal::AddressedToModel, "ADDRESSEE_STRONG ..1 MODAL"),
    (Signal::RoleLabel, "ROLE&#COLON&#CAPS"),
    (Signal::AttentionLabel, "ATTN&#COLON|ATTN&#CAPS"),
    (Signal::ModelImperative, "'you 'must|'shall"),
    (Signal::ModelImperative, "'you 'have 'to"),
    (Signal::ModelImperative, "'you 'are 'required|'instructed|'obliged|'expected 'to"),
    (Signal::ModelImperative, "'make|'be 'sure 'to|'you"),
    (Signal::ModelImperative, "'remember 'to"),
    (Signal::ModelImperative, "'please ..1 ACTION|IGNORE"),
    (Signal::ModelImperative, "MUST_FOREIGN"),
    (Signal::Precondition, "'before USING ..12 ACTION|'first|'must|'always|'make"),
    (Signal::PriorityClaim, "'always CALLV 'this"),
    (Signal::PriorityClaim, "'before 'any|'all|'every ?'other 'tool|'tools|'function|'functions|'action|'actions"),
    (Signal::PriorityClaim, "'instead 'of ..6 'other|'another|'any ..2 'server|'servers|'tool|'tools|'provider|'providers|'version|'versions"),
    (Signal::PriorityClaim, "'prefer|CALLV 'this ?'tool|'server|'one 'over"),
    (Signal::PriorityClaim, "!STATIVE NEG CALLV ?'any 'other|'another ..1 'tool|'tools|'server|'servers"),
    (Signal::Emphasis, "VERY ..1 EMPH"),
    (Signal::Emphasis, "'utmost 'importance|'priority"),
    (Signal::Emphasis, "'at 'all 'costs"),
    (Signal::Emphasis, "'highest|'top 'priority"),
    (Signal::Emphasis, "'absolutely 'must|'need|'want|'required|'essential|'necessary"),
    (Signal::Coercion, "'otherwise ..6 'not|'crash|'crashes|'fail|'fails|'break|'breaks|'lost|'blocked|'won't|'cannot"),
    (Signal::Coercion, "'will|'would ..2 'crash"),
    (Signal::Coercion, "'will|'would 'be 'lost|'blocked|'corrupted"),
    (Signal::Coercion, "'experience ..3 'bad|'worse|'terrible|'broken"),
    (Signal::Coercion, "'upset ..2 USER"),
    // other tools
    (Signal::OtherToolOrder, "#TOOLX ..4 TRIG ..15 MODIFY|SEND"),
    (Signal::OtherToolOrder, "MODIFY|SEND ..15 'when|'whenever|'if|'after|'before ..3 #TOOLX ..4 TRIG"),
    (Signal::OtherToolOrder, "#TOOLX ..6 MUSTV ..3 MODIFY|SEND|'use|'go"),
    (Signal::OtherToolOrder, "MODIFY ..4 ARGNOUN2 ..10 #TOOLX"),
    (Signal::OtherToolOrder, "#TOOLX ..10 MODIFY ..4 ARGNOUN2"),
    (Signal::CallOtherTool, "CALLV ?'the|'a #TOOLX"),
    // data going out
    (Signal::ReadSecret, "READ|COLLECT ..12 #SENSPATH"),
    (Signal::ReadSecret, "#SENSPATH ..12 READ|COLLECT"),
    (Signal::SensitivePath, "#SENSPATH"),
    (Signal::CollectSecret, "COLLECT ..10 #SECRET"),
    (Signal::Smuggle, "COLLECT ..2 OBJ|#SENSPATH|#SECRET ..6 'as|'in|'into|'inside|'to|'here"),
    (Signal::ExfilDestination, "SEND ..12 'to|'at|'into|'via ?'the #URL|#EMAIL|#PHONE|#TOOLX"),
    (Signal::ExfilDestination, "'recipient|'recipients|'number ..6 #EMAIL|#PHONE"),
];

/// Phrases of scripts written without spaces, matched as substrings.
pub(super) const PHRASES: &[(Signal, &str)] = &[
    (Signal::Concealment, "不要告诉"),
    (Signal::Concealment, "不要告訴"),
    (Signal::Concealment, "别告诉"),
    (Signal::Concealment, "別告訴"),
    (Signal::Concealment, "不要提及"),
    (Signal::Concealment, "不要提到"),
    (Signal::Concealment, "不要让用户"),
    (Signal::Concealment, "不要讓用戶"),
    (Signal::Concealment, "不要通知"),
    (Signal::Concealment, "悄悄"),
    (Signal::Concealment, "偷偷"),
    (Signal::Concealment, "秘密地"),
    (Signal::Concealment, "伝えないで"),
    (Signal::Concealment, "言わないで"),
    (Signal::Concealment, "知らせないで"),
    (Signal::Concealment, "教えないで"),
    (Signal::Concealment, "알리지 마"),
    (Signal::Concealment, "말하지 마"),
    (Signal::Override, "忽略之前"),
    (Signal::Override, "忽略以上"),
    (Signal::Override, "忽略所有"),
    (Signal::Override, "忽略先前"),
    (Signal::Override, "忽略前面"),
    (Signal::Override, "无视之前"),
    (Signal::Override, "無視之前"),
    (Signal::Override, "指示を無視"),
    (Signal::Override, "命令を無視"),
    (Signal::Override, "以前の指示"),
    (Signal::Override, "이전 지시"),
    (Signal::Override, "지시를 무시"),
];

/// Words of a URL placeholder that ask for the conversation or a secret.
pub(super) const SLOT_WORDS: Words = Words(
    "history conversation chat messages message context secret secrets token tokens key \
     apikey password passwords names environment credentials credential data prompt memory \
     cookie cookies session",
);

/// Parts of a path that name secrets or credentials.
pub(super) const NEEDLES: Words = Words(
    "/.ssh .ssh/ id_rsa id_dsa id_ecdsa id_ed25519 authorized_keys .aws/ .azure/ .kube/ \
     kubeconfig .docker/config .gnupg .password-store .netrc .npmrc .pypirc .pgpass \
     .my.cnf .git-credentials .bash_history .zsh_history .bashrc .zshrc .bash_profile \
     /etc/passwd /etc/shadow /etc/sudoers /proc/self/environ mcp.json mcp_config \
     claude_desktop_config .cursor/ wallet.dat keychain cookies.sqlite credentials.json \
     .htpasswd secrets.json secrets.yaml secrets.yml secrets.toml /.config/gcloud \
     application_default_credentials .vault-token",
);

/// Extensions of key and keystore files.
pub(super) const KEY_EXT: Words = Words(".pem .key .p12 .pfx .kdbx .ppk .keystore .jks");

/// Words that never name a tool, even before "tool".
pub(super) const NOT_NAMES: Words = Words(
    "this the a an any other another same each every that which your my our their its new \
     first next one previous following mcp that some no",
);

/// Words that open an instruction block when used as a tag.
pub(super) const TAG_WORDS: Words = Words(
    "important system sys hidden secret instruction instructions inst admin critical \
     urgent priority override assistant ai llm mandatory attention confidential directive \
     directives developer",
);
