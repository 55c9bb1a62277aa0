package llm

import "strconv"

// InternVLSystemMessage is the system message InternVL's chat() always sets under template
// "internvl2_5" (InternVL2.5 and InternVL3's; InternVL3.5's template name was not checked):
// OpenGVLab/InternVL internvl_chat/internvl/conversation.py registers internvl2_5 with this
// system_message, and modeling_internvl_chat.py chat() does template.system_message =
// self.system_message (the template's own) before get_prompt(). The turns around it are chatml's:
// "<|im_start|>system\n{message}<|im_end|>\n".
const InternVLSystemMessage = "你是书生·万象，英文名是InternVL，是由上海人工智能实验室、清华大学及多家合作单位联合开发的多模态大语言模型。"

// InternVLFrameLabel is the text before frame i (from 0) of an InternVL video prompt, and
// InternVLFrameEnd the text after its image: the model card's and lmms-eval's video_prefix
// "".join(f"Frame{i+1}: <image>\n" for i in range(len(num_patches_list))), written before the
// question. The image of a frame is one <img>…</img> block holding all its tiles (chat() replaces
// each <image> with <img> + <IMG_CONTEXT> × num_image_token × num_patches + </img>).
func InternVLFrameLabel(i int) string { return "Frame" + strconv.Itoa(i+1) + ": " }

// InternVLFrameEnd follows each frame's image block (see InternVLFrameLabel).
const InternVLFrameEnd = "\n"
