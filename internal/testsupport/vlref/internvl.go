package vlref

import (
	"strconv"
	"strings"
)

// InternVL's conversation template internvl2_5 (OpenGVLab/InternVL internvl_chat/internvl/
// conversation.py, register_conv_template(Conversation(name='internvl2_5', …))).
const (
	internVLSystemTemplate = "<|im_start|>system\n{system_message}"
	internVLUserRole       = "<|im_start|>user\n"
	internVLAssistantRole  = "<|im_start|>assistant\n"
	internVLSep            = "<|im_end|>\n"
)

// InternVLMPTPrompt is Conversation.get_prompt for SeparatorStyle.MPT (conversation.py): the system
// prompt (system_template with the message) and the separator, then for each message its role and,
// when the message is not empty, the message and the separator.
func InternVLMPTPrompt(system string, messages [][2]string) string {
	ret := strings.Replace(internVLSystemTemplate, "{system_message}", system, 1) + internVLSep
	for _, m := range messages {
		if m[1] != "" {
			ret += m[0] + m[1] + internVLSep
		} else {
			ret += m[0]
		}
	}
	return ret
}

// InternVLVideoQuery is the text InternVL's chat() tokenizes for a video question as lmms-eval asks
// it, every <IMG_CONTEXT> token written as imgContext (the test vocabulary lacks that token):
//   - lmms_eval/models/simple/internvl3.py, generate_until (modality video): question =
//     "".join(f"Frame{i+1}: <image>\n" for i in range(len(num_patches_list))) + contexts;
//   - internvl_chat/internvl/model/internvl_chat/modeling_internvl_chat.py, chat(): the template's
//     system message, append_message(roles[0], question), append_message(roles[1], None),
//     get_prompt(), then for each num_patches in order query.replace('<image>', '<img>' +
//     '<IMG_CONTEXT>' * num_image_token * num_patches + '</img>', 1).
func InternVLVideoQuery(system, contexts string, numPatches []int, numImageToken int, imgContext string) string {
	var q strings.Builder
	for i := range numPatches {
		q.WriteString("Frame" + strconv.Itoa(i+1) + ": <image>\n")
	}
	q.WriteString(contexts)
	query := InternVLMPTPrompt(system, [][2]string{{internVLUserRole, q.String()}, {internVLAssistantRole, ""}})
	for _, p := range numPatches {
		query = strings.Replace(query, "<image>", "<img>"+strings.Repeat(imgContext, numImageToken*p)+"</img>", 1)
	}
	return query
}
